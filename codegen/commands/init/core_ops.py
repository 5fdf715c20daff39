"""The core ops: the factory, copy and view kernels every backend needs before any tensor can
exist on its device, and the convolutions at::convolution cannot do without.

Their implementations are hand-written once, in the device runtime (runtime/csrc/ops/core_ops.h,
namespace scaffold::runtime). A backend's kernel files for them forward there in one line, so
the reference backend and every project made by `scaffold-backend init` share one source of
truth: a fix in the runtime reaches all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...api.signatures import KernelBinding
from ...emit.kernel_file import KernelFile

CORE_OPS = (
    "empty.memory_format",
    "empty_strided",
    "as_strided",
    "view",
    "_reshape_alias",
    # Views with a device-generic ATen implementation that the dispatcher still asks every backend
    # for. Through the CPU fallback they would be views of a host copy: writes through them would
    # never reach the device tensor (PyTorch's copying fallback only warns).
    "unfold",
    "view_as_complex",
    "view_as_real",
    "resize_",
    "_copy_from",
    "_copy_from_and_resize",
    "_local_scalar_dense",
    "set_.source_Storage",
    "set_.source_Storage_storage_offset",
    "set_.source_Tensor",
    "set_",
    "fill_.Scalar",
    "zero_",
    "_efficientzerotensor",
    # Not views or factories, but as necessary: at::_convolution and at::convolution_backward
    # call these for every out-of-tree tensor, and their default kernels only raise
    # (model/raising_defaults.py), so without them no CNN runs on a new backend.
    "convolution_overrideable",
    "convolution_backward_overrideable",
)
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
