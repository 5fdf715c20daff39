"""The kernel files of the core ops (model/core_ops.py) in a new project: they forward to the
runtime in one line, so the reference backend and every project made by `scaffold-backend init`
share one source of truth: a fix in the runtime reaches all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...api.signatures import KernelBinding
from ...emit.kernel_file import KernelFile
from ...model.core_ops import CORE_OPS

CORE_OPS_HEADER = "core_ops.h"
RUNTIME_NAMESPACE = "scaffold::runtime"


def forwarding_statement(binding: KernelBinding) -> str:
    return f"return {RUNTIME_NAMESPACE}::{binding.kernel_name}({', '.join(binding.signature.kernel_argument_names)});"


def fill_core_kernels(kernel: KernelFile, bindings: Iterable[KernelBinding]) -> str:
    """The text of a fresh stub file whose core-op kernels forward to the runtime (rendered from
    the stub template with those bodies). Kernels of other ops in the same file keep their stub
    body."""
    bodies = {
        binding.op_name: forwarding_statement(binding)
        for binding in bindings
        if binding.op_name in CORE_OPS and binding.op_name in kernel.kernels
    }
    return kernel.with_bodies(bodies, includes=[f'"{CORE_OPS_HEADER}"']).output.content
