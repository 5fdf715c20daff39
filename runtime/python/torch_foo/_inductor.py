"""Inductor and Dynamo for a scaffolded device (device-name agnostic).

Inductor finds a PrivateUse1 backend's code generators as attributes of its
device module (``torch.<name>.Scheduling``, ``PythonWrapperCodegen``,
``CppWrapperCodegen``, ``WrapperFxCodegen``; see
``torch._inductor.codegen.common.init_backend_registration``). The device
module resolves them lazily through :func:`codegen_attribute`, so
``import torch_<name>`` does not import Inductor; the first compile does,
and registers everything else Inductor and Dynamo need at the same time: the
device interface and the device op overrides.

The simulated device's memory is host memory, so Inductor's CPU C++ code
generation (``CppScheduling``) writes the kernels. The Python wrapper launches
each of them on the device's stream (``_compiled_kernels.launch``), as a CUDA
graph's Triton kernels are launched: the runtime translates the device
pointers (not dereferenceable: memory protection) to the host view, the way
its own kernels reach device memory, and the kernel runs on the stream's
worker. A hardware team replaces :class:`DeviceScheduling` (and the kernel
call below) with its own code generator, e.g. Triton. Inductor's C++ wrapper
(``cpp_wrapper=True``) does the same through the runtime's C ABI
(``_cpp_wrapper.py``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, cast

import torch

from . import _convolution_layout
from ._compiled_kernels import host_addressable

_lock = threading.Lock()
_registered: set[str] = set()

# The attributes of the device module that Inductor looks up.
CODEGEN_ATTRIBUTES = (
    "Scheduling",
    "PythonWrapperCodegen",
    "CppWrapperCodegen",
    "WrapperFxCodegen",
)

HOST_VIEW_OP = "torch.ops.scaffold_runtime.host_view.default"
_PACKAGE = __name__.rpartition(".")[0]


def codegen_attribute(device_name: str, attribute: str) -> Any:
    """The class Inductor asks the device module for, registering on first use."""
    register(device_name)
    return _codegen_classes(device_name)[attribute]


def register(device_name: str) -> None:
    """Register the device with Inductor and Dynamo (idempotent)."""
    with _lock:
        if device_name in _registered:
            return
        from torch._dynamo.device_interface import register_interface_for_device
        from torch._inductor.codegen.common import (
            register_backend_for_device,
            register_device_op_overrides,
        )

        classes = _codegen_classes(device_name)
        interface = _device_interface(device_name)
        register_interface_for_device(device_name, interface)
        for index in range(interface.device_count()):
            register_interface_for_device(f"{device_name}:{index}", interface)
        register_device_op_overrides(device_name, _device_op_overrides(device_name))
        _name_the_aten_device_type(device_name)
        _treat_as_cpp_codegen_nodes(device_name)
        _answer_kernel_language(device_name)
        register_backend_for_device(
            device_name,
            classes["Scheduling"],
            classes["PythonWrapperCodegen"],
            classes["CppWrapperCodegen"],
            classes["WrapperFxCodegen"],
        )
        _key_cached_graphs_on_this_module(device_name)
        _registered.add(device_name)


def _name_the_aten_device_type(device_name: str) -> None:
    """Before torch 2.15, the C++ wrapper reads a device's ATen device type from a table."""
    from torch._inductor.codegen import cpp_utils

    table = getattr(cpp_utils, "DEVICE_TO_ATEN", None)
    if isinstance(table, dict):
        table[device_name] = "at::kPrivateUse1"


def _key_cached_graphs_on_this_module(device_name: str) -> None:
    """Inductor's FX graph cache keeps compiled graphs, this module's wrapper code included, across
    processes, keyed on torch and the graph but not on this module: after an upgrade or a downgrade
    of the backend, a cached graph would call into wrapper helpers another version has or lacks, or
    check its convolutions' results against another version's layouts (_convolution_layout.py).
    The key covers every custom backend pass's uuid, so a pass that is never applied -- it sits
    under a name that is no device's -- adds a hash of this file to it. (Inductor's own
    registration of the device, which calls register() above, resets the device's own entry.)"""
    try:
        from torch._inductor.codegen.common import custom_backend_passes
        from torch._inductor.custom_graph_pass import CustomGraphModulePass, get_hash_for_files
    except ImportError:
        return  # a torch without custom backend passes, whose key has no place for it

    # Read once (the key is computed at every compile). The device's kernels are written for its
    # compute threads (DeviceScheduling), which the key must cover as Inductor's covers the CPU's.
    from . import _cpp_wrapper

    files = (__file__, _convolution_layout.__file__)
    version = get_hash_for_files(files) + f" threads {device_compute_threads(device_name)}".encode()
    # The C++ wrapper's code (its ABI's declaration included), under a key of its own.
    cpp_wrapper_version = get_hash_for_files((_cpp_wrapper.__file__,))

    class WrapperCodeVersion(CustomGraphModulePass):
        def __init__(self, version: bytes) -> None:
            self.version = version

        def __call__(self, gm: torch.fx.GraphModule) -> None:
            return None

        def uuid(self) -> bytes:
            return self.version

    custom_backend_passes[f"{device_name} wrapper code"] = WrapperCodeVersion(version)
    custom_backend_passes[f"{device_name} C++ wrapper code"] = WrapperCodeVersion(cpp_wrapper_version)


def compile_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
    """The named Dynamo backend (``torch.compile(model, backend="<name>")``):
    Inductor, with this device registered first."""
    register(torch._C._get_privateuse1_backend_name())
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)


def _treat_as_cpp_codegen_nodes(device_name: str) -> None:
    """Inductor's scheduler skips the loop reindexing and reordering that its C++ code generator
    does not support by asking ``node.is_cpu()``. This device's kernels come from that same
    generator, so its nodes must answer True too (else fusion of a reduction with a pointwise
    node crashes in the scheduler, e.g. in a backward pass)."""
    from torch._inductor import scheduler

    node_class: Any = scheduler.BaseSchedulerNode  # patched below, beyond its declared type
    if not hasattr(node_class, "is_cpu"):
        return  # a torch without these checks
    if hasattr(node_class, "_scaffold_cpp_devices"):
        node_class._scaffold_cpp_devices = {*node_class._scaffold_cpp_devices, device_name}
        return

    def is_cpu(self: Any) -> bool:
        device = self.get_device()
        return device is not None and device.type in node_class._scaffold_cpp_devices

    node_class._scaffold_cpp_devices = {"cpu", device_name}
    node_class.is_cpu = is_cpu


# The kernel language of DeviceScheduling (CppScheduling below), as Inductor names its backends
# (config.cpu_backend / config.cuda_backend values). A port that writes Triton kernels says "triton".
KERNEL_LANGUAGE = "cpp"


def _answer_kernel_language(device_name: str) -> None:
    """Inductor asks ``utils.get_current_backend(device_type)`` which language a device's kernels
    are written in, and answers ``config.cuda_backend`` ("triton") for every device it does not
    know. Code generation then takes Triton's paths for this device's C++ kernels: no C++ dtype
    propagation, so masked loads (padding) and dtype casts fail to compile. The answer for this
    device becomes KERNEL_LANGUAGE; every other device keeps Inductor's own (CUDA's included).
    Modules that imported the function by name get the same wrapper."""
    import sys

    from torch._inductor import utils

    original = getattr(utils, "get_current_backend", None)
    if original is None:
        return  # a torch without the question: nothing to answer
    devices: set[str] = getattr(original, "_scaffold_devices", set())
    if devices:
        devices.add(device_name)
        return

    def get_current_backend(device_type: str | None = None) -> str:
        if not device_type:
            from torch._inductor.virtualized import V

            device_type = V.graph.get_current_device_or_throw().type
        if device_type in devices:
            return KERNEL_LANGUAGE
        return str(original(device_type))

    devices.add(device_name)
    get_current_backend._scaffold_devices = devices  # type: ignore[attr-defined]
    get_current_backend.__wrapped__ = original  # type: ignore[attr-defined]
    for name, module in list(sys.modules.items()):
        if name.startswith("torch._inductor") and getattr(module, "get_current_backend", None) is original:
            module.get_current_backend = get_current_backend  # type: ignore[attr-defined]


_classes: dict[str, dict[str, Any]] = {}


def _codegen_classes(device_name: str) -> dict[str, Any]:
    if device_name not in _classes:
        _classes[device_name] = _make_codegen_classes(device_name)
    return _classes[device_name]


def _make_codegen_classes(device_name: str) -> dict[str, Any]:
    from torch._inductor.codegen.cpp import CppScheduling
    from torch._inductor.codegen.wrapper import (
        PythonWrapperCodegen,
        SubgraphPythonWrapperCodegen,
    )
    from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen

    from ._cpp_wrapper import make_cpp_wrapper_codegen

    class DeviceScheduling(CppScheduling):
        """Inductor's C++ (OpenMP + vectorized) kernels, for device memory, written for the
        threads the device's kernels compute with (its multiprocessor count), not the host's.
        Their parallel regions take the running thread's OpenMP team size, as ATen's kernels do
        (Inductor's dynamic threads): the stream's worker computes with more threads while the
        host waits for it than while the host works."""

    threads = device_compute_threads(device_name)
    for method in _KERNEL_WRITING_METHODS:
        if hasattr(CppScheduling, method):  # some are missing from older torch releases
            setattr(DeviceScheduling, method, _written_for_threads(getattr(CppScheduling, method), threads))

    class LaunchedKernelCalls(PythonWrapperCodegen):
        """C++ kernels on this device are launched on its stream (``_compiled_kernels.launch``);
        one whose arguments are not all pointers and 64-bit integers runs on the calling
        thread, on host views of its tensors, which wait for the stream's earlier work."""

        def write_header(self) -> None:
            super().write_header()
            self.header.splice(
                f"_host_view = {HOST_VIEW_OP}\nfrom {_PACKAGE}._compiled_kernels import launch as _launch_kernel\n"
            )

        def _generate_kernel_call_helper(self, kernel_name: str, call_args: Any, *args: Any, **kwargs: Any) -> None:
            device = kwargs.get("device") or _current_device()
            if device.type != device_name or kwargs.get("triton", True):
                super()._generate_kernel_call_helper(kernel_name, call_args, *args, **kwargs)
                return
            arg_types = kwargs.get("arg_types") or [None] * len(call_args)
            if _launchable(arg_types) or not host_addressable():
                pointers = [_is_pointer(arg_type) for arg_type in arg_types]
                tensors = [arg for arg, pointer in zip(call_args, pointers, strict=True) if pointer]
                integers = [arg for arg, pointer in zip(call_args, pointers, strict=True) if not pointer]
                kinds = "".join("t" if pointer else "i" for pointer in pointers)
                self.writeline(  # type: ignore[no-untyped-call]
                    f"_launch_kernel({kernel_name!r}, {kernel_name}, {kinds!r}, "
                    f"[{', '.join(tensors)}], [{', '.join(integers)}])"
                )
                return
            wrapped = [
                f"_host_view({arg})" if _is_pointer(arg_type) else arg
                for arg, arg_type in zip(call_args, arg_types, strict=True)
            ]
            self.writeline(self.wrap_kernel_call(kernel_name, wrapped))  # type: ignore[no-untyped-call]

    class DeviceSubgraphWrapperCodegen(LaunchedKernelCalls, SubgraphPythonWrapperCodegen):
        """The wrapper of a subgraph (torch.cond branches, ...)."""

    class DeviceWrapperCodegen(LaunchedKernelCalls):
        """The Python wrapper of a graph on this device: its C++ kernels and its ATen kernels
        alike are launched on the stream, so the whole graph runs on the stream's worker."""

        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: Any,
            partition_signatures: Any = None,
        ) -> Any:
            # The base class's create() builds a plain PythonWrapperCodegen.
            if is_subgraph:
                return DeviceSubgraphWrapperCodegen(
                    cast(str, subgraph_name),
                    parent_wrapper,
                    partition_signatures,  # named when a subgraph
                )
            return DeviceWrapperCodegen()  # type: ignore[no-untyped-call]

    return {
        "Scheduling": DeviceScheduling,
        "PythonWrapperCodegen": DeviceWrapperCodegen,
        "CppWrapperCodegen": make_cpp_wrapper_codegen(device_name),
        "WrapperFxCodegen": WrapperFxCodegen,
    }


# The methods of Inductor's C++ scheduling that write kernel code, and so read its thread count.
_KERNEL_WRITING_METHODS = ("codegen_node", "codegen_outer_loop_node", "codegen_template", "flush")


def device_compute_threads(device_name: str) -> int:
    """The threads a kernel of the device computes with (the stream worker's OpenMP team). Every
    device of the simulated runtime has the same, fixed for the process, so the first answers."""
    return int(getattr(torch, device_name).get_device_properties(0).multi_processor_count)


def _written_for_threads(method: Callable[..., Any], threads: int) -> Callable[..., Any]:
    @functools.wraps(method)
    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        from torch._inductor import config

        with config.patch({"cpp.threads": threads, "cpp.dynamic_threads": True}):
            return method(self, *args, **kwargs)

    return write


def _current_device() -> torch.device:
    from torch._inductor.virtualized import V

    return V.graph.get_current_device_or_throw()


def _is_pointer(arg_type: Any) -> bool:
    # cpp_argdefs types: "const float*", "float*", "const int64_t", ...
    return isinstance(arg_type, str) and arg_type.rstrip().endswith("*")


# What a launched kernel's entry point may take besides pointers: the runtime passes every
# argument in a 64-bit integer slot (runtime/csrc/ops/compiled_kernel_launch.h).
_LAUNCHED_INTEGER_TYPES = frozenset({"int64_t", "long"})
_MAX_LAUNCHED_ARGUMENTS = 255  # the runtime's kMaxCompiledKernelArguments


def _launchable(arg_types: list[Any]) -> bool:
    def integer(arg_type: Any) -> bool:
        return isinstance(arg_type, str) and arg_type.replace("const ", "").strip() in _LAUNCHED_INTEGER_TYPES

    return (
        len(arg_types) <= _MAX_LAUNCHED_ARGUMENTS
        and any(_is_pointer(arg_type) for arg_type in arg_types)
        and all(_is_pointer(arg_type) or integer(arg_type) for arg_type in arg_types)
    )


def _device_op_overrides(device_name: str) -> Any:
    from textwrap import dedent

    from torch._inductor.codegen.common import DeviceOpOverrides

    class DeviceOps(DeviceOpOverrides):
        """Python snippets the wrapper emits for this device."""

        def import_get_raw_stream_as(self, name: str) -> str:
            # Work is synchronous: stream 0 stands for all of them.
            return dedent(
                f"""
                def {name}(_):
                    return 0
                """
            )

        def set_device(self, device_idx: int | str) -> str:
            return f"torch.{device_name}.set_device({device_idx})"

        def synchronize(self) -> str:
            return f"torch.{device_name}.synchronize()"

        def device_guard(self, device_idx: int | str) -> str:
            return f"torch.{device_name}.device({device_idx})"

        def cpp_kernel_type(self) -> str:
            return "void*"

        def aten_device_type(self) -> str:
            # The C++ wrapper's device (torch >= 2.15 asks here; older releases read DEVICE_TO_ATEN).
            return "at::kPrivateUse1"

    return DeviceOps()


def _wrapper_headers(device_name: str) -> str:
    """An include directory with the wrapper headers Inductor includes by the device's name
    (``torch/csrc/inductor/{aoti_include,cpp_wrapper}/<device>.h``, which torch has for its own
    devices only): the CPU's, which the device's wrappers use."""
    import os

    from torch._inductor.runtime.cache_dir_utils import cache_dir

    root = os.path.join(cache_dir(), "scaffold_wrapper_headers", device_name)
    for kind in ("aoti_include", "cpp_wrapper"):
        path = os.path.join(root, "torch", "csrc", "inductor", kind, f"{device_name}.h")
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            partial = f"{path}.{os.getpid()}"
            with open(partial, "w") as header:
                header.write(f"#pragma once\n#include <torch/csrc/inductor/{kind}/cpu.h>\n")
            os.replace(partial, path)  # whole, even with compiles in other processes
    return root


def _device_interface(device_name: str) -> Any:
    from torch._dynamo.device_interface import CpuInterface, DeviceInterface

    module = getattr(torch, device_name)

    class Interface(DeviceInterface):
        """What Dynamo and Inductor ask of the device (torch.<name> answers)."""

        class Event(CpuInterface.Event):
            pass

        class Worker:
            @staticmethod
            def set_device(device: int) -> None:
                module.set_device(device)

            @staticmethod
            def current_device() -> int:
                return int(module.current_device())

            @staticmethod
            def get_device_properties(device: Any = None) -> Any:
                return CpuInterface.Worker.get_device_properties(device)

        device = module.device

        @staticmethod
        def current_device() -> int:
            return int(module.current_device())

        @staticmethod
        def set_device(device: Any) -> None:
            module.set_device(device)

        @staticmethod
        def device_count() -> int:
            return int(module.device_count())

        @staticmethod
        def is_available() -> bool:
            return bool(module.is_available())

        @staticmethod
        def synchronize(device: Any = None) -> None:
            module.synchronize(device)

        @staticmethod
        def get_raw_stream(device_idx: Any) -> int:
            return 0

        @staticmethod
        def current_stream() -> Any:
            return torch.Stream(device=device_name)

        @staticmethod
        def is_bf16_supported(including_emulation: bool = False) -> bool:
            return True

        @staticmethod
        def get_compute_capability(device: Any = None) -> str:
            return ""

        @staticmethod
        def is_triton_capable(device: Any = None) -> bool:
            return False

        @staticmethod
        def get_cpp_device_options(aot_mode: bool, compile_only: bool) -> Any:
            """torch 2.15: how C++ for the device compiles: as the CPU's, with the headers
            Inductor includes by the device's name (_wrapper_headers)."""
            from torch._inductor.cpp_builder import get_cpp_torch_device_options

            definitions, include_dirs, *rest = get_cpp_torch_device_options(
                "cpu", aot_mode=aot_mode, compile_only=compile_only
            )
            return (definitions, [*include_dirs, _wrapper_headers(device_name)], *rest)

        @staticmethod
        def is_gpu() -> bool:
            """torch 2.15: not a GPU to Inductor (no GPU codegen or fusion, no cudagraph trees):
            the device's kernels are C++ written by Inductor's CPU code generator."""
            return False

        @classmethod
        def get_cache_system_info(cls) -> dict[str, object] | None:
            """torch 2.15: what the compiled code depends on beyond torch, for Inductor's code
            cache key: the threads a kernel is written for (DeviceScheduling) and the version of
            the backend package that launches it."""
            from importlib.metadata import PackageNotFoundError, version

            try:
                package_version = version(_PACKAGE)
            except PackageNotFoundError:
                package_version = "unknown"
            return {"compute_threads": device_compute_threads(device_name), "package": package_version}

        @staticmethod
        def memory_allocated(device: Any = None) -> int:
            return int(module.memory_allocated(device))

    Interface.__name__ = Interface.__qualname__ = f"{device_name.capitalize()}Interface"
    return Interface
