"""The core ops: the factory, copy and view kernels every backend needs before any tensor can
exist on its device.

Their implementations are hand-written once, in the device runtime (runtime/csrc/core_ops.h,
namespace scaffold::runtime). A backend's kernel files for them forward there in one line, so
the reference backend and every project made by `scaffold-backend init` share one source of
truth: a fix in the runtime reaches all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from .kernel_file import KernelFile
from .signatures import KernelBinding

CORE_OPS = (
    "empty.memory_format",
    "empty_strided",
    "as_strided",
    "view",
    "_reshape_alias",
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
)
CORE_OPS_HEADER = "core_ops.h"
RUNTIME_NAMESPACE = "scaffold::runtime"
_EXCEPTION_INCLUDE = "#include <c10/util/Exception.h>\n"


def forwarding_statement(binding: KernelBinding) -> str:
    return f"return {RUNTIME_NAMESPACE}::{binding.kernel_name}({', '.join(binding.kernel_argument_names)});"


def fill_core_kernels(kernel: KernelFile, bindings: Iterable[KernelBinding]) -> str:
    """The text of a fresh stub file whose core-op kernels forward to the runtime. Kernels of
    other ops in the same file keep their stub body."""
    text = kernel.output.content
    changed = False
    for binding in bindings:
        if binding.op_name not in CORE_OPS or binding.op_name not in kernel.heads:
            continue
        head = kernel.heads[binding.op_name] + " {\n"
        start = text.index(head) + len(head)
        end = text.index("\n", start) + 1
        text = text[:start] + f"  {forwarding_statement(binding)}\n" + text[end:]
        changed = True
    if changed:
        text = text.replace(_EXCEPTION_INCLUDE, f'{_EXCEPTION_INCLUDE}\n#include "{CORE_OPS_HEADER}"\n', 1)
    return text
