"""The C++ kernels Inductor compiles for the device, launched on its stream (device-name agnostic).

The wrapper Inductor writes for a graph on the device (``_inductor.py``) calls :func:`launch`
for each of its C++ kernels whose arguments are all pointers and 64-bit integers. The kernel's
``extern "C"`` entry point then runs on the stream's worker, after the work enqueued before it,
and the call returns at once, as a CUDA kernel launch does
(``runtime/csrc/ops/compiled_kernel_launch.h``). A kernel whose entry point cannot be
found (a torch whose Python bindings are built differently) runs on the calling thread instead,
on host views, once the stream's earlier work is done: slower, never wrong. On a device whose
memory the host cannot address, every kernel runs on the calling thread on CPU copies of its
tensors (same sizes and strides), and the tensors it changed are copied back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch

_NOT_LAUNCHABLE = -1
# A kernel's Python binding -> its handle in the runtime (or _NOT_LAUNCHABLE).
_handles: dict[Callable[..., Any], int] = {}


def launch(name: str, kernel: Callable[..., Any], argument_kinds: str, tensors: Sequence[torch.Tensor],
           integers: Sequence[int]) -> None:
    """Launches `kernel` (Inductor's Python binding of a compiled kernel) on the current stream:
    argument i is the next of `tensors` where `argument_kinds[i]` is ``"t"``, the next of
    `integers` where it is ``"i"``. `name` names the launch in the profiler and in error messages."""
    if not host_addressable():
        _run_on_copies(kernel, argument_kinds, tensors, integers)
        return
    handle = _handles.get(kernel)
    if handle is None:
        handle = _handles[kernel] = _load(name, kernel)
    if handle != _NOT_LAUNCHABLE:
        torch.ops.scaffold_runtime.launch_compiled_kernel.default(handle, argument_kinds, tensors, integers)
        return
    host_view = torch.ops.scaffold_runtime.host_view.default  # waits for the stream's earlier work
    remaining_tensors, remaining_integers = iter(tensors), iter(integers)
    kernel(*(host_view(next(remaining_tensors)) if kind == "t" else next(remaining_integers)
             for kind in argument_kinds))


@functools.cache
def host_addressable() -> bool:
    """The driver's answer for the device (``torch.<device>.device_memory_is_host_addressable``)."""
    module = getattr(torch, torch._C._get_privateuse1_backend_name(), None)
    answer = getattr(module, "device_memory_is_host_addressable", None)
    return answer is None or bool(answer())


def _bytes_of(tensor: torch.Tensor) -> torch.Tensor:
    """The bytes of a staged tensor's own storage, as a uint8 tensor."""
    return torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage())


def _run_on_copies(kernel: Callable[..., Any], argument_kinds: str, tensors: Sequence[torch.Tensor],
                   integers: Sequence[Any]) -> None:
    """Runs `kernel` on CPU copies of `tensors` laid out as they are (the kernel's index arithmetic
    assumes their strides), then copies back each one whose bytes the kernel changed: its outputs,
    and nothing it only read (an input may alias another argument's memory)."""
    staged = [torch.empty_strided(t.size(), t.stride(), dtype=t.dtype).copy_(t) for t in tensors]
    before = [_bytes_of(s).clone() for s in staged]
    remaining_tensors, remaining_values = iter(staged), iter(integers)
    kernel(*(next(remaining_tensors) if kind == "t" else next(remaining_values) for kind in argument_kinds))
    for tensor, copy, old in zip(tensors, staged, before, strict=True):
        if not torch.equal(_bytes_of(copy), old):
            tensor.copy_(copy)


def _load(name: str, kernel: Callable[..., Any]) -> int:
    """The runtime's handle of the entry point behind a Python binding Inductor built
    (``CppPythonBindingsCodeCache``): the module it belongs to is the shared object that holds it."""
    from torch._inductor.codecache import CppPythonBindingsCodeCache

    module = getattr(kernel, "__self__", None)
    path = getattr(module, "__file__", None)
    symbol = getattr(CppPythonBindingsCodeCache, "entry_function", None)
    if not isinstance(path, str) or not isinstance(symbol, str):
        return _NOT_LAUNCHABLE
    return int(torch.ops.scaffold_runtime.load_compiled_kernel.default(path, symbol, name))
