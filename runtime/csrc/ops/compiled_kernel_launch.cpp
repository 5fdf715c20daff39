#include "compiled_kernel_launch.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <utility>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "launch.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

using Slot = std::uintptr_t;
using Caller = void (*)(void* entry, const Slot* arguments);

template <size_t... Index>
void call_with(void* entry, const Slot* arguments, std::index_sequence<Index...>) {
  using Entry = void (*)(decltype((void)Index, Slot())...);
  reinterpret_cast<Entry>(entry)(arguments[Index]...);
}

template <size_t Count>
void call_entry(void* entry, const Slot* arguments) {
  call_with(entry, arguments, std::make_index_sequence<Count>{});
}

template <size_t... Count>
constexpr std::array<Caller, sizeof...(Count)> make_callers(std::index_sequence<Count...>) {
  return {&call_entry<Count>...};
}

// callers[n] calls an entry point of n arguments.
constexpr auto callers = make_callers(std::make_index_sequence<kMaxCompiledKernelArguments + 1>{});

struct CompiledKernel {
  void* entry;
  std::string name; // its c_str() names the kernel's launches: stable while registered
};

// Kernels are never unregistered: their shared objects stay loaded for the
// process (Python never unloads an extension module, and dlopen below holds
// one more reference).
std::mutex registry_mutex;
std::vector<std::unique_ptr<CompiledKernel>> registry;

const CompiledKernel& registered_kernel(int64_t kernel) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  TORCH_CHECK(
      kernel >= 0 && static_cast<size_t>(kernel) < registry.size(),
      "launch_compiled_kernel: ", kernel, " is not a loaded kernel's handle (load_compiled_kernel)");
  return *registry[static_cast<size_t>(kernel)];
}

// The address the kernel reads `tensor` at: its data pointer in the host
// view. An empty tensor may have no storage, and the kernel never reads it.
// A CPU scalar (Dynamo's wrapping of a Python float, a 0-dim CPU tensor) is
// read by its value at the launch, as a CUDA kernel receives it: the kernel
// reads a copy, which `tensor` becomes, so a later change on the host does
// not race with the kernel.
Slot kernel_address(at::Tensor& tensor, c10::Device device, size_t position, const std::string& name) {
  TORCH_CHECK(tensor.defined(), name, ": argument ", position, " is an undefined tensor");
  if (tensor.device().is_cpu() && tensor.dim() == 0) {
    tensor = tensor.clone();
    return reinterpret_cast<Slot>(tensor.const_data_ptr());
  }
  TORCH_CHECK(
      tensor.device() == device,
      name, ": argument ", position, " is on ", tensor.device(), ", the kernel's other tensors on ", device,
      "; a compiled kernel takes tensors of one device");
  const void* data = tensor.const_data_ptr();
  if (data == nullptr || tensor.numel() == 0) {
    return reinterpret_cast<Slot>(data);
  }
  return reinterpret_cast<Slot>(launch_host_address(data));
}

} // namespace

int64_t load_compiled_kernel(const std::string& path, const std::string& symbol, const std::string& name) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    return -1;
  }
  void* entry = dlsym(library, symbol.c_str());
  if (entry == nullptr) {
    dlclose(library);
    return -1;
  }
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registry.push_back(std::make_unique<CompiledKernel>(CompiledKernel{entry, name}));
  return static_cast<int64_t>(registry.size() - 1);
}

void launch_compiled_kernel(
    int64_t kernel,
    c10::string_view argument_kinds,
    std::vector<at::Tensor> tensors,
    const std::vector<int64_t>& integers) {
  const CompiledKernel& compiled = registered_kernel(kernel);
  const size_t count = tensors.size() + integers.size();
  TORCH_CHECK(
      count <= kMaxCompiledKernelArguments, compiled.name, ": ", count, " arguments; a launched kernel takes at most ",
      kMaxCompiledKernelArguments);
  const auto kinds_of = [&](char kind) {
    return static_cast<size_t>(std::count(argument_kinds.begin(), argument_kinds.end(), kind));
  };
  TORCH_CHECK(
      argument_kinds.size() == count && kinds_of('t') == tensors.size() && kinds_of('i') == integers.size(),
      compiled.name, ": argument kinds '", argument_kinds, "' (t: tensor, i: integer) do not fit ",
      tensors.size(), " tensors and ", integers.size(), " integers");

  const auto on_device = std::find_if(tensors.begin(), tensors.end(), [](const at::Tensor& tensor) {
    return tensor.defined() && tensor.device().type() == c10::DeviceType::PrivateUse1;
  });
  TORCH_CHECK(
      on_device != tensors.end(), compiled.name, ": no argument is a tensor of this device, which the kernel runs on");
  const c10::Device device = on_device->device();
  std::vector<Slot> arguments(count);
  size_t next_tensor = 0;
  size_t next_integer = 0;
  for (size_t position = 0; position < count; ++position) {
    if (argument_kinds[position] == 't') {
      arguments[position] = kernel_address(tensors[next_tensor++], device, position, compiled.name);
    } else {
      arguments[position] = static_cast<Slot>(integers[next_integer++]);
    }
  }
  // The launched work keeps the storages alive, not the tensors: a tensor the
  // wrapper made has a Python object, which the tensor comes to own once
  // Python drops it (`del buf3` while the kernel is queued). The worker
  // releasing the last reference would then take the GIL to free that object,
  // and wait for the launching thread to let go of it -- up to Python's
  // switch interval, once for every such kernel.
  std::vector<c10::Storage> storages;
  storages.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    if (tensor.has_storage()) {
      storages.push_back(tensor.storage());
    }
  }
  launch(
      device.index(),
      compiled.name.c_str(),
      [entry = compiled.entry,
       caller = callers[count],
       arguments = std::move(arguments),
       keep_alive = std::move(storages)]() {
        caller(entry, arguments.data());
      });
}

} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  // Takes no tensor, so its kernel serves every dispatch key.
  m.def(
      "load_compiled_kernel(str path, str symbol, str name) -> int",
      [](c10::string_view path, c10::string_view symbol, c10::string_view name) {
        return scaffold::runtime::load_compiled_kernel(std::string(path), std::string(symbol), std::string(name));
      });
  m.def("launch_compiled_kernel(int kernel, str argument_kinds, Tensor[] tensors, int[] integers) -> ()");
}

TORCH_LIBRARY_IMPL(scaffold_runtime, PrivateUse1, m) {
  m.impl(
      "launch_compiled_kernel",
      [](int64_t kernel, c10::string_view argument_kinds, at::TensorList tensors, c10::IntArrayRef integers) {
        scaffold::runtime::launch_compiled_kernel(
            kernel, argument_kinds, tensors.vec(), std::vector<int64_t>(integers.begin(), integers.end()));
      });
}
