"""The layout of the device's convolution results, told to torch.compile.

PyTorch plans an out-of-tree backend's convolution (ConvBackend.Overrideable) to return a
contiguous result. This device's convolutions lay out their results as the CPU's oneDNN ones (and
cuDNN) do: channels-last when the input or the weight is (runtime/csrc/ops/convolution_ops.cpp).
Fake tensors -- what torch.compile and torch.export trace with -- ask
``torch._C._conv_determine_backend_memory_format`` for the layout, so the device's convolutions
are answered with the oneDNN backend's rule, which both sides read from PyTorch. Other devices'
answers are unchanged.
"""

from __future__ import annotations

from typing import Any

import torch

# torch._C's stubs name the enum ConvBackend; the module binds it as _ConvBackend.
_OVERRIDEABLE = torch._C._ConvBackend.Overrideable  # type: ignore[attr-defined]
_LAID_OUT_AS = torch._C._ConvBackend.Mkldnn  # type: ignore[attr-defined]


def install(device_name: str) -> None:
    """Answer ``device_name``'s convolutions with the layout its kernels produce (idempotent)."""
    original = torch._C._conv_determine_backend_memory_format
    if getattr(original, "_scaffold_device", None) == device_name:
        return

    def determine_backend_memory_format(input: Any, weight: Any, backend: Any) -> torch.memory_format:
        if backend == _OVERRIDEABLE and input.device.type == device_name:
            backend = _LAID_OUT_AS
        return original(input, weight, backend)

    vars(determine_backend_memory_format)["_scaffold_device"] = device_name
    torch._C._conv_determine_backend_memory_format = determine_backend_memory_format
