"""Ops whose kernels a driver ships as device code. A project made with `init --driver NAME` lists
them in its backend YAML, and its kernel files for them forward to the driver's implementations in
one line (as the core ops' forward to the runtime), so the project computes on its device from the
start; the team replaces a body when it writes its own kernel.

OpenCL's (runtime/driver/opencl/ops/opencl_ops.h, one declaration per op below): the core a new
port writes first -- elementwise arithmetic with broadcasting and type promotion, reductions,
matrix products, softmax forward and backward, and an optimizer step (fused SGD). What their device
code does not cover declines to the copying fallback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DriverKernels:
    ops: tuple[str, ...]
    header: str
    """The header declaring them, as the kernel files include it (found on the include path the
    driver's driver.cmake adds)."""
    namespace: str
    location: str
    """Where a project has them, for its YAML's comment."""


DRIVER_KERNELS = {
    "opencl": DriverKernels(
        ops=(
            "add.out",
            "sub.out",
            "mul.out",
            "div.out",
            "neg.out",
            "abs.out",
            "exp.out",
            "log.out",
            "sqrt.out",
            "tanh.out",
            "sigmoid.out",
            "relu",
            "relu_",
            "threshold_backward.grad_input",
            "sum.IntList_out",
            "mean.out",
            "amax.out",
            "mm.out",
            "addmm.out",
            "bmm.out",
            "_softmax.out",
            "_log_softmax.out",
            "_softmax_backward_data.out",
            "_log_softmax_backward_data.out",
            "_fused_sgd_",
        ),
        header="opencl_ops.h",
        namespace="scaffold::opencl_ops",
        location="driver/opencl/ops/opencl_ops.h",
    ),
}


def driver_kernel_ops(driver: str) -> tuple[str, ...]:
    """The ops `driver` has device kernels for (none for the simulated device)."""
    kernels = DRIVER_KERNELS.get(driver)
    return kernels.ops if kernels is not None else ()
