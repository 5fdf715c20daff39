"""Ops that have a default kernel (`default: True`) that only raises for an out-of-tree backend.

The header's flags call such an op optional, yet every backend that wants the feature must register
a kernel: the default raises "not implemented", and the boxed CPU fallback cannot help because the
CPU's kernel for the op is that same raising default (CPU and CUDA never call these ops; they pick
their own kernels one level up). The list is kept by hand, from ATen's sources and the conformance
sweep of the reference backend; each entry says who calls the op.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

RAISING_DEFAULT_KERNELS: Mapping[str, str] = MappingProxyType(
    {
        "convolution_overrideable": (
            "at::_convolution picks it for every PrivateUse1 tensor: conv1d/2d/3d and the "
            "transposed convolutions"
        ),
        "convolution_backward_overrideable": (
            "at::convolution_backward picks it for every PrivateUse1 tensor: the gradients of "
            "all convolutions"
        ),
    }
)
