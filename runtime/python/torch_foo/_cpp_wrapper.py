"""Inductor's C++ wrapper (``cpp_wrapper=True``) on a scaffolded device (device-name agnostic).

The wrapper is a shared object built against libtorch alone; it reaches the device runtime through
a small C ABI (``runtime/csrc/compiled_wrapper/compiled_wrapper_abi.h``), whose table it asks the
dispatcher for once. Through it, the wrapper does what the Python wrapper (``_inductor.py``) does:

- a compiled C++ kernel is launched on the device's stream (``launch_kernel``), or, when its
  arguments are not all pointers and 64-bit integers, called inline on host addresses;
- an ATen kernel Inductor calls with an ``out=`` buffer (``mm``, ``addmm``, ...) runs the CPU C
  shim on host views of its tensors, as the simulated device's own kernels do;
- every other ATen or custom op on the device's tensors goes through the dispatcher, to the
  device's own kernels (``aoti_torch_call_dispatcher``, Inductor's runtime lookup).

A hardware team replaces the host-view paths: its kernels take device pointers, and its ``out=``
kernels come from a C shim of its own (``aoti_torch_<device>_*``), or the dispatcher.

AOTInductor (``aoti_compile_and_package``, ``aoti_load_package``) builds the same wrapper into a
model. torch's AOTInductor runtime, compiled into each model (``aoti_runtime/model_base.h``),
places a model on cpu, cuda, xpu or mps only, so the device's model is a host model whose kernels
launch on the device: its constants are declared host tensors here, and its first run moves them to
the device for good (``constants_to_device``). The device's model runner
(``runtime/csrc/aot_inductor/model_runner.h``, registered under the device's name, which the
package records) creates it for the device's index.
"""

from __future__ import annotations

from typing import Any

import torch

from ._inductor import _is_pointer as is_pointer
from ._inductor import _launchable as launchable

# SCAFFOLD_COMPILED_WRAPPER_ABI_VERSION in compiled_wrapper_abi.h; the declaration below matches it.
ABI_VERSION = 2
ABI_OP = "scaffold_runtime::compiled_wrapper_abi"


def wrapper_support(device_name: str) -> str:
    """The C++ the wrapper of a graph on the device compiles with: the ABI table's declaration
    (compiled_wrapper_abi.h, same layout) and the helpers the generated calls use."""
    return f"""
// The {device_name} runtime's C ABI for compiled wrappers (compiled_wrapper_abi.h, version {ABI_VERSION}).
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace scaffold_wrapper {{

struct Abi {{
  uint64_t version;
  uint64_t size;
  const char* (*launch_kernel)(const char*, void*, const char*, const AtenTensorHandle*, int64_t,
                               const int64_t*, int64_t);
  const char* (*host_address)(AtenTensorHandle, void**);
  const char* (*host_view)(AtenTensorHandle, AtenTensorHandle*);
  const char* (*to_device)(AtenTensorHandle, int32_t, AtenTensorHandle*);
}};

inline void check(const char* error) {{
  if (error != nullptr) {{
    throw std::runtime_error(std::string("{device_name}: ") + error);
  }}
}}

inline const Abi& abi() {{
  static const Abi* const table = [] {{
    StableIValue stack[1];
    const int64_t version = {ABI_VERSION};
    std::memcpy(&stack[0], &version, sizeof(version));
    if (aoti_torch_call_dispatcher("{ABI_OP}", "", stack) != AOTI_TORCH_SUCCESS) {{
      throw std::runtime_error(
          "{device_name}: the compiled wrapper cannot reach the device runtime "
          "({ABI_OP} failed: is the backend imported, and is it the one the model was compiled with?)");
    }}
    int64_t address = 0;
    std::memcpy(&address, &stack[0], sizeof(address));
    const Abi* found = reinterpret_cast<const Abi*>(static_cast<uintptr_t>(address));
    if (found->version != {ABI_VERSION} || found->size != sizeof(Abi)) {{
      throw std::runtime_error("{device_name}: the device runtime's compiled-wrapper ABI differs from "
                               "this wrapper's: compile the model again");
    }}
    return found;
  }}();
  return *table;
}}

template <size_t Tensors, size_t Integers>
inline void launch(const char* name, void* entry, const char* kinds,
                   const std::array<AtenTensorHandle, Tensors>& tensors,
                   const std::array<int64_t, Integers>& integers) {{
  check(abi().launch_kernel(name, entry, kinds, tensors.data(), Tensors, integers.data(), Integers));
}}

inline void* host_address(AtenTensorHandle tensor) {{
  void* address = nullptr;
  check(abi().host_address(tensor, &address));
  return address;
}}

inline RAIIAtenTensorHandle host_view(AtenTensorHandle tensor) {{
  AtenTensorHandle view = nullptr;
  check(abi().host_view(tensor, &view));
  return RAIIAtenTensorHandle(view);
}}

// An AOTInductor model's constants load on the host (the device's model is a host model to
// torch's AOTInductor runtime): each run first moves those still there to the device, for good,
// then has the model refresh its array of them.
template <typename ConstantMap, typename Refresh>
void constants_to_device(ConstantMap& constants, int32_t device_index, Refresh&& refresh) {{
  static std::mutex mutex;  // the models of one container share their constants
  const std::lock_guard<std::mutex> lock(mutex);
  bool moved = false;
  for (auto& [name, constant] : constants) {{
    int32_t device_type = 0;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(constant.get(), &device_type));
    if (device_type == aoti_torch_device_type_cpu()) {{
      AtenTensorHandle on_device = nullptr;
      check(abi().to_device(constant.get(), device_index, &on_device));
      constant = RAIIAtenTensorHandle(on_device);
      moved = true;
    }}
  }}
  if (moved) {{
    refresh();
  }}
}}

// An optional tensor argument of the C shim (AtenTensorHandle*, nullptr for none), on the host.
struct OptionalHostView {{
  RAIIAtenTensorHandle owner;
  AtenTensorHandle handle = nullptr;
  operator AtenTensorHandle*() {{ return handle == nullptr ? nullptr : &handle; }}
}};

// An argument of a C shim call: a tensor becomes its host view (alive until the call returns),
// anything else passes unchanged.
template <typename T>
decltype(auto) on_host(T&& value) {{
  using Plain = std::decay_t<T>;
  if constexpr (std::is_same_v<Plain, AtenTensorHandle*>) {{
    OptionalHostView optional;
    if (value != nullptr && *value != nullptr) {{
      optional.owner = host_view(*value);
      optional.handle = optional.owner.get();
    }}
    return optional;
  }} else if constexpr (!std::is_same_v<Plain, std::nullptr_t> &&
                       std::is_convertible_v<T&&, AtenTensorHandle>) {{
    return host_view(static_cast<AtenTensorHandle>(value));
  }} else {{
    return std::forward<T>(value);
  }}
}}

}}  // namespace scaffold_wrapper
"""


def make_cpp_wrapper_codegen(device_name: str) -> Any:
    """Inductor's C++ wrapper (CppWrapperCpu) with the device's kernels and ATen calls routed
    through the runtime's ABI and the dispatcher (see the module docstring)."""
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
    from torch._inductor.virtualized import V

    class DeviceCppWrapperCodegen(CppWrapperCpu):
        """The C++ wrapper of a graph on the device (cpp_wrapper=True)."""

        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: Any,
            partition_signatures: Any = None,
        ) -> Any:
            if V.graph.aot_mode:
                _check_aot_inductor_support(device_name)
                _compile_models_without_a_device_header()
            return DeviceCppWrapperCodegen()  # type: ignore[no-untyped-call]

        def _write_constants_unpacking(self) -> None:
            if V.graph.aot_mode and V.graph.constants:
                self.add_device_include(device_name)
                self.prefix.writeline(
                    "scaffold_wrapper::constants_to_device(*constants_map_, this->device_idx_, "
                    "[this] { update_constants_array_from_map(); });"
                )
            super()._write_constants_unpacking()  # type: ignore[no-untyped-call]

        def codegen_model_constructor(self) -> None:
            # An AOTInductor model's constants: the device's, declared host tensors (the module
            # docstring says why); codegen_device below names their device.
            self._constants_on_host = True
            device, self.device = self.device, device_name  # the model's device, to Inductor's checks
            try:
                super().codegen_model_constructor()  # type: ignore[no-untyped-call]
            finally:
                self.device = device
                self._constants_on_host = False

        def codegen_device(self, device: Any) -> str:
            if getattr(self, "_constants_on_host", False) and device.type == device_name:
                return str(super().codegen_device(torch.device("cpu")))  # type: ignore[no-untyped-call]
            return str(super().codegen_device(device))  # type: ignore[no-untyped-call]

        def add_device_include(self, device: str) -> None:
            if device != device_name:
                super().add_device_include(device)
                return
            if device in self.included_devices:
                return
            # The common runtime and the CPU's C shim, which the host-view calls use.
            super().add_device_include("cpu")
            self.included_devices.add(device)
            self.header.splice(wrapper_support(device_name))

        def _generate_kernel_call_helper(self, kernel_name: str, call_args: Any, *args: Any, **kwargs: Any) -> None:
            device = kwargs.get("device") or V.graph.get_current_device_or_throw()
            if device.type != device_name or kwargs.get("triton", True):
                super()._generate_kernel_call_helper(kernel_name, call_args, *args, **kwargs)
                return
            self.add_device_include(device_name)
            arg_types = kwargs.get("arg_types") or [None] * len(call_args)
            if launchable(arg_types):
                pointers = [is_pointer(arg_type) for arg_type in arg_types]
                tensors = [str(arg) for arg, pointer in zip(call_args, pointers, strict=True) if pointer]
                integers = [
                    f"static_cast<int64_t>({arg})"
                    for arg, pointer in zip(call_args, pointers, strict=True)
                    if not pointer
                ]
                kinds = "".join("t" if pointer else "i" for pointer in pointers)
                self.writeline(  # type: ignore[no-untyped-call]
                    f'scaffold_wrapper::launch("{kernel_name}", reinterpret_cast<void*>(&{kernel_name}), '
                    f'"{kinds}", std::array<AtenTensorHandle, {len(tensors)}>{{{", ".join(tensors)}}}, '
                    f"std::array<int64_t, {len(integers)}>{{{', '.join(integers)}}});"
                )
                return
            # Not launchable (a double, ...): inline, on host addresses, after the stream's work.
            host_args = [
                f"({arg_type})(scaffold_wrapper::host_address({arg}))" if is_pointer(arg_type) else str(arg)
                for arg, arg_type in zip(call_args, arg_types, strict=True)
            ]
            self.writeline(self.wrap_kernel_call(kernel_name, host_args))  # type: ignore[no-untyped-call]

        def _generate_extern_kernel_out_helper(
            self,
            kernel: str,
            out: str,
            out_view: str | None,
            args: list[str],
            device: str,
            *rest: Any,
            **options: Any,
        ) -> None:
            if device != device_name:
                super()._generate_extern_kernel_out_helper(kernel, out, out_view, args, device, *rest, **options)
                return
            self.add_device_include(device_name)
            if out_view:
                out = f"{out}_as_strided"
                self.writeline(f"auto {out} = {out_view};")  # type: ignore[no-untyped-call]
            # The kernel comes named as the device's C shim would name it (aoti_torch_<device>_*).
            device_shim = f"aoti_torch_{device_name}_"
            if kernel.startswith(device_shim):
                kernel = "aoti_torch_cpu_" + kernel[len(device_shim) :]
            super()._generate_extern_kernel_out_helper(
                kernel,
                f"scaffold_wrapper::on_host({out})",
                None,
                [f"scaffold_wrapper::on_host({arg})" for arg in args],
                "cpu",
                *rest,
                **options,
            )

        def _generate_extern_kernel_alloc_helper(self, extern_kernel: Any, args: list[str]) -> None:
            device = extern_kernel.get_device()
            if device is None or device.type != device_name:
                super()._generate_extern_kernel_alloc_helper(extern_kernel, args)  # type: ignore[no-untyped-call]
                return
            _dispatch_at_runtime(self, device_name, extern_kernel, args)

        def generate_c_shim_extern_kernel_call(
            self, kernel: str, args: list[str], device: str, *rest: Any, **options: Any
        ) -> None:
            # Every path of the device's ops is routed above: another is a clear error, not a
            # call of a C shim the device does not have.
            if device == device_name or kernel.startswith(f"aoti_torch_{device_name}_"):
                raise NotImplementedError(
                    f"Inductor's C++ wrapper on the '{device_name}' device cannot call {kernel}: "
                    f"the device has no C shim (aoti_torch_{device_name}_*); use the Python wrapper"
                )
            super().generate_c_shim_extern_kernel_call(kernel, args, device, *rest, **options)

    return DeviceCppWrapperCodegen


def _check_aot_inductor_support(device_name: str) -> None:
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

    if not hasattr(CppWrapperCpu, "_write_constants_unpacking"):
        raise NotImplementedError(
            f"AOTInductor on the '{device_name}' device needs torch 2.14 or later (this is "
            f"{torch.__version__}): before, Inductor's C++ wrapper has no place to move a model's "
            f"constants to the device. torch.compile (with cpp_wrapper=True for a C++ wrapper) works"
        )


def _compile_models_without_a_device_header() -> None:
    """AOTInductor precompiles a header named after the model's device
    (``torch/csrc/inductor/aoti_include/<device>.h``), which torch has for its own devices only.
    From torch 2.15 on, the device interface's ``get_cpp_device_options`` puts one on the include
    path (``_inductor.py``); before, the model is compiled without a precompiled header."""
    from torch._dynamo.device_interface import DeviceInterface
    from torch._inductor import config

    if not hasattr(DeviceInterface, "get_cpp_device_options"):
        config.aot_inductor.precompile_headers = False


def _dispatch_at_runtime(wrapper: Any, device_name: str, extern_kernel: Any, args: list[str]) -> None:
    """An ATen or custom op on the device's tensors that allocates its results runs through the
    dispatcher, on the device's own kernels, as in eager mode."""
    import torch
    from torch._inductor import ir

    op = getattr(extern_kernel, "op_overload", None)
    if not isinstance(op, torch._ops.OpOverload):
        raise NotImplementedError(
            f"Inductor's C++ wrapper on the '{device_name}' device cannot call "
            f"{extern_kernel.python_kernel_name}: it is no ATen or custom operator, and the device "
            f"has no C shim; use the Python wrapper"
        )
    if isinstance(extern_kernel, ir.FallbackKernel):
        wrapper.generate_fallback_kernel_with_runtime_lookup(
            extern_kernel.get_name(),
            extern_kernel.python_kernel_name,
            lambda: args,
            op,
            extern_kernel.export_extern_kernel_node(),
            extern_kernel.codegen_outputs(),
        )
        return
    # An extern kernel of one result it allocates (a convolution): the runtime lookup's own entry
    # point names results of fallback kernels only.
    generate = getattr(wrapper, "_generate_fallback_kernel_jit", None)
    if generate is None:
        raise NotImplementedError(
            f"Inductor's C++ wrapper on the '{device_name}' device cannot call {op} with this torch "
            f"(no runtime lookup of an extern kernel's result); use the Python wrapper"
        )
    # Its arguments as the op takes them (what FallbackKernel.export_extern_kernel_node gives):
    # tensors, then constants, then the keywords in the op's order.
    keywords = getattr(extern_kernel, "kwargs", {}) or {}
    ordered = getattr(extern_kernel, "ordered_kwargs_for_cpp_kernel", []) or []
    raw_args = [*extern_kernel.inputs, *extern_kernel.constant_args, *(keywords.get(key) for key in ordered)]
    if len(raw_args) != len(op._schema.arguments):
        raise NotImplementedError(
            f"Inductor's C++ wrapper on the '{device_name}' device cannot call {op}: its "
            f"{len(raw_args)} arguments do not match the schema's {len(op._schema.arguments)}; "
            f"use the Python wrapper"
        )
    generate(
        extern_kernel.get_name(),
        extern_kernel.python_kernel_name,
        lambda: args,
        op,
        raw_args,
        [extern_kernel.get_name()],
        [extern_kernel],
    )
