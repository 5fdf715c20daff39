"""Python side of the custom op(s) foo::for_each_add_ of the foo backend: the fake kernel
torch.compile and torch.export trace with (shapes, dtypes and devices only, no data), and, when the
YAML asks for autograd, its backward and setup_context (torch.library.register_autograd).

Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates the
function signatures when the schema changes and keeps every line you write.
"""

from __future__ import annotations


def for_each_add__fake(tq, inc) -> None:
    # tq is the fake queue (custom_classes/tensor_queue.py, FakeTensorQueue): the op's effect on
    # the queued tensors is applied to the fake ones, so the traced program sees it.
    tq.for_each_add_(inc)


# scaffold-backend adds the functions of new overloads above this line.
