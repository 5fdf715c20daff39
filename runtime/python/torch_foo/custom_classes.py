"""The Python side of foo's custom classes: what torch.compile and torch.export trace with.

The C++ classes live in custom_classes/ (``torch.classes.foo.TensorQueue``); tracing must not run
them (their methods have side effects and see real data), so each has a *fake class* here,
registered with ``torch._library.register_fake_class``: the tracer calls the C++ object's
``__obj_flatten__``, builds the fake object with ``__obj_unflatten__`` from that state (its tensors
made fake), and runs the fake's methods instead of the real ones. Every op taking a class gets a
fake kernel (``torch.library.register_fake``) that works on the fake object.

Imported by the package's ``__init__`` after the compiled module is loaded (the classes and ops
must exist before their fakes are registered).
"""

from __future__ import annotations

from typing import Any

import torch


@torch._library.register_fake_class("foo::TensorQueue")
class FakeTensorQueue:
    """The fake twin of ``torch.classes.foo.TensorQueue`` (custom_classes/tensor_queue.h)."""

    def __init__(self, queue: list[torch.Tensor], init_tensor_: torch.Tensor) -> None:
        self.queue = queue
        self.init_tensor_ = init_tensor_

    @classmethod
    def __obj_unflatten__(cls, flattened_state: Any) -> FakeTensorQueue:
        # The pairs TensorQueue::obj_flatten returns: ("queue", [...]), ("init_tensor_", t).
        return cls(**dict(flattened_state))

    def push(self, tensor: torch.Tensor) -> None:
        self.queue.append(tensor)

    def pop(self) -> torch.Tensor:
        if self.queue:
            return self.queue.pop(0)
        return self.init_tensor_

    def size(self) -> int:
        return len(self.queue)

    def get_raw_queue(self) -> list[torch.Tensor]:
        return list(self.queue)

    def for_each_add_(self, inc: torch.Tensor) -> None:
        for tensor in self.queue:
            tensor.add_(inc)


@torch.library.register_fake("foo::for_each_add_")
def _fake_for_each_add_(tq: FakeTensorQueue, inc: torch.Tensor) -> None:
    tq.for_each_add_(inc)
