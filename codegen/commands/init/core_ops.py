"""The kernel files of a new project's core ops and random ops (model/core_ops.py) and of the ops
its driver has device kernels for (model/driver_ops.py): they forward in one line, to the runtime
and to the driver's kernels, so the reference backend and every project made by `scaffold-backend
init` share one source of truth: a fix there reaches all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...api.signatures import KernelBinding
from ...emit.kernel_file import KernelFile
from ...model.core_ops import CORE_OPS, RANDOM_OPS, RANDOM_OPS_HEADER
from ...model.driver_ops import DRIVER_KERNELS
from ...model.project import HOST_ADDRESSABLE_DRIVERS

CORE_OPS_HEADER = "core_ops.h"
RUNTIME_NAMESPACE = "scaffold::runtime"


def random_ops(driver: str) -> tuple[str, ...]:
    """The runtime's random ops a new project with `driver` lists: where the host addresses the
    driver's memory, which their kernels compute in."""
    return RANDOM_OPS if driver in HOST_ADDRESSABLE_DRIVERS else ()


def forwarding_statement(binding: KernelBinding, namespace: str = RUNTIME_NAMESPACE) -> str:
    return f"return {namespace}::{binding.kernel_name}({', '.join(binding.signature.kernel_argument_names)});"


def fill_core_kernels(kernel: KernelFile, bindings: Iterable[KernelBinding], driver: str) -> str:
    """The text of a fresh stub file whose core-op and random-op kernels forward to the runtime, and whose
    kernels of ops with device kernels in `driver` forward there (rendered from the stub template
    with those bodies). Kernels of other ops in the same file keep their stub body."""
    bodies: dict[str, str] = {}
    includes: list[str] = []
    driver_kernels = DRIVER_KERNELS.get(driver)
    for binding in bindings:
        if binding.op_name not in kernel.kernels:
            continue
        if binding.op_name in CORE_OPS:
            bodies[binding.op_name] = forwarding_statement(binding)
            header = CORE_OPS_HEADER
        elif binding.op_name in RANDOM_OPS:
            bodies[binding.op_name] = forwarding_statement(binding)
            header = RANDOM_OPS_HEADER
        elif driver_kernels is not None and binding.op_name in driver_kernels.ops:
            bodies[binding.op_name] = forwarding_statement(binding, driver_kernels.namespace)
            header = driver_kernels.header
        else:
            continue
        if f'"{header}"' not in includes:
            includes.append(f'"{header}"')
    return kernel.with_bodies(bodies, includes=includes).output.content
