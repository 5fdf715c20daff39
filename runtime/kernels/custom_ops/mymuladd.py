"""Python side of the custom op(s) foo::mymuladd of the foo backend: the fake kernel
torch.compile and torch.export trace with (shapes, dtypes and devices only, no data), and, when the
YAML asks for autograd, its backward and setup_context (torch.library.register_autograd).

Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates the
function signatures when the schema changes and keeps every line you write.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def mymuladd_fake(a, b, c) -> Tensor:
    torch._check(a.shape == b.shape, lambda: "foo::mymuladd: a and b must have the same shape")
    torch._check(a.dtype == torch.float and b.dtype == torch.float, lambda: "foo::mymuladd: a and b must be float32")
    torch._check(a.device == b.device, lambda: "foo::mymuladd: a and b must be on one device")
    return torch.empty_like(a)


def mymuladd_setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    a, b, _ = inputs
    # d(a * b + c)/da = b and d/db = a: keep only what a requested gradient needs.
    ctx.save_for_backward(b if ctx.needs_input_grad[0] else None, a if ctx.needs_input_grad[1] else None)


def mymuladd_backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    b, a = ctx.saved_tensors
    grad_a = grad * b if ctx.needs_input_grad[0] else None
    grad_b = grad * a if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


# scaffold-backend adds the functions of new overloads above this line.
