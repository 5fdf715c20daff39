#include "compiled_wrapper_abi.h"

#include <dlfcn.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/csrc/inductor/aoti_torch/utils.h>
#include <torch/library.h>

#include "compiled_kernel_launch.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

// The message an ABI function returns; the caller reads it before its next call.
thread_local std::string last_error;

template <typename Body>
const char* reporting_errors(Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return nullptr;
  } catch (const c10::Error& error) {
    last_error = error.what_without_backtrace();
  } catch (const std::exception& error) {
    last_error = error.what();
  } catch (...) {
    last_error = "unknown error in the device runtime";
  }
  return last_error.c_str();
}

const at::Tensor& tensor_of(AtenTensorOpaque* handle, const char* what) {
  TORCH_CHECK(handle != nullptr, what, ": a null tensor handle");
  return *torch::aot_inductor::tensor_handle_to_tensor_pointer(handle);
}

bool on_device(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().type() == c10::DeviceType::PrivateUse1;
}

// The runtime's kernel handle (load_compiled_kernel) of a compiled wrapper's
// kernel: the wrapper's shared object, which holds it, is loaded (it runs).
int64_t kernel_handle(void* entry, const char* name) {
  static std::mutex mutex;
  static std::unordered_map<void*, int64_t> handles;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = handles.find(entry); found != handles.end()) {
    return found->second;
  }
  Dl_info info{};
  TORCH_CHECK(
      dladdr(entry, &info) != 0 && info.dli_fname != nullptr,
      name, ": the compiled kernel's entry point is in no loaded shared object");
  const std::string symbol = info.dli_sname != nullptr ? info.dli_sname : name;
  const int64_t handle = load_compiled_kernel(info.dli_fname, symbol, name);
  TORCH_CHECK(handle >= 0, name, ": ", info.dli_fname, " exports no entry point ", symbol, " to launch");
  handles.emplace(entry, handle);
  return handle;
}

const char* launch_kernel(
    const char* name,
    void* entry,
    const char* argument_kinds,
    AtenTensorOpaque* const* tensors,
    int64_t tensor_count,
    const int64_t* integers,
    int64_t integer_count) {
  return reporting_errors([&] {
    TORCH_CHECK(tensor_count >= 0 && integer_count >= 0, name, ": negative argument counts");
    std::vector<at::Tensor> arguments;
    arguments.reserve(static_cast<size_t>(tensor_count));
    for (int64_t index = 0; index < tensor_count; ++index) {
      arguments.push_back(tensor_of(tensors[index], name));
    }
    launch_compiled_kernel(
        kernel_handle(entry, name),
        argument_kinds,
        std::move(arguments),
        std::vector<int64_t>(integers, integers + integer_count));
  });
}

const char* host_address_of(AtenTensorOpaque* handle, void** address) {
  return reporting_errors([&] {
    const at::Tensor& tensor = tensor_of(handle, "host_address");
    const void* data = tensor.const_data_ptr();
    const bool translate = on_device(tensor) && data != nullptr && tensor.numel() != 0;
    *address = const_cast<void*>(translate ? host_address(data) : data);
  });
}

const char* host_view_of(AtenTensorOpaque* handle, AtenTensorOpaque** view) {
  return reporting_errors([&] {
    const at::Tensor& tensor = tensor_of(handle, "host_view");
    *view = torch::aot_inductor::new_tensor_handle(on_device(tensor) ? host_view(tensor) : at::Tensor(tensor));
  });
}

const char* to_device(AtenTensorOpaque* handle, int32_t device_index, AtenTensorOpaque** device) {
  return reporting_errors([&] {
    const at::Tensor& host = tensor_of(handle, "to_device");
    TORCH_CHECK(host.device().is_cpu(), "to_device: the tensor is on ", host.device(), ", not the host");
    // The whole storage, so that the copy keeps the tensor's offset and any
    // strides the model reinterprets it with.
    at::Tensor storage = at::empty({0}, host.options()).set_(host.storage());
    const c10::Device target(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device_index));
    *device = torch::aot_inductor::new_tensor_handle(
        storage.to(target).as_strided(host.sizes(), host.strides(), host.storage_offset()));
  });
}

constexpr ScaffoldCompiledWrapperAbi abi{
    SCAFFOLD_COMPILED_WRAPPER_ABI_VERSION,
    sizeof(ScaffoldCompiledWrapperAbi),
    &launch_kernel,
    &host_address_of,
    &host_view_of,
    &to_device,
};

int64_t compiled_wrapper_abi(int64_t version) {
  TORCH_CHECK(
      version == SCAFFOLD_COMPILED_WRAPPER_ABI_VERSION,
      "this device runtime's compiled-wrapper ABI is version ", SCAFFOLD_COMPILED_WRAPPER_ABI_VERSION,
      ", the compiled wrapper asks for version ", version, ": compile the model again with this runtime");
  return static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(&abi));
}

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  // Takes no tensor, so its kernel serves every dispatch key.
  m.def("compiled_wrapper_abi(int version) -> int", &scaffold::runtime::compiled_wrapper_abi);
}
