"""Python side of the custom op(s) tiny::scale, tiny::scale.out of the tiny backend: the fake kernel
torch.compile and torch.export trace with (shapes, dtypes and devices only, no data), and, when the
YAML asks for autograd, its backward and setup_context (torch.library.register_autograd).

Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates the
function signatures when the schema changes and keeps every line you write.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def scale_fake(self, factor) -> Tensor:
    return torch.empty_like(self)


def scale_setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    raise NotImplementedError("tiny::scale: write its scale_setup_context in this file")


def scale_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    raise NotImplementedError("tiny::scale: write its scale_backward in this file")


def scale_out_fake(self, factor, out) -> Tensor:
    return out


# scaffold-backend adds the functions of new overloads above this line.
