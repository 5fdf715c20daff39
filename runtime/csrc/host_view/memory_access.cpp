#include "memory_access.h"

#include <cstring>
#include <string>

#include <ATen/ops/empty.h>
#include <c10/core/DeviceType.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "allocator.h"
#include "capture.h"
#include "host_traffic.h"
#include "profiler.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// Deleter of a host view's DataPtr: drops the reference to the device
// storage that the view held (see host_view).
void release_device_storage(void* storage_impl) {
  c10::intrusive_ptr<c10::StorageImpl>::reclaim(
      static_cast<c10::StorageImpl*>(storage_impl));
}

} // namespace

void* translate_device_address(const void* device_ptr) noexcept {
  void* host = nullptr;
  return drvHostPointer(&host, device_ptr) == drvSuccess ? host : nullptr;
}

c10::DeviceIndex device_of_address(const void* device_ptr) noexcept {
  int device = -1;
  return drvPointerGetDevice(&device, device_ptr) == drvSuccess
      ? static_cast<c10::DeviceIndex>(device)
      : static_cast<c10::DeviceIndex>(-1);
}

bool is_device_pointer(const void* ptr) noexcept {
  return translate_device_address(ptr) != nullptr;
}

void* launch_host_address(const void* device_ptr) {
  void* host = translate_device_address(device_ptr);
  if (host == nullptr && device_ptr != nullptr && !device_memory_is_host_addressable()) {
    refuse_host_access("host_address");
  }
  TORCH_CHECK(
      host != nullptr,
      "host_address: ",
      device_ptr,
      " is not ",
      c10::get_privateuse1_backend(),
      " device memory (it must come from the ",
      c10::get_privateuse1_backend(),
      " allocator)");
  return host;
}

void* host_address(const void* device_ptr) {
  void* host = launch_host_address(device_ptr);
  // Host code is about to touch the memory: run it after the work already
  // queued on the current stream, as a kernel launched there would.
  wait_for_current_stream(device_of_address(device_ptr));
  return host;
}

namespace {

at::Tensor make_host_view(const at::Tensor& device_tensor, bool wait) {
  const std::string backend = c10::get_privateuse1_backend();
  TORCH_CHECK(device_tensor.defined(), "host_view: got an undefined tensor");
  TORCH_CHECK(
      device_tensor.device().type() == c10::DeviceType::PrivateUse1,
      "host_view expects a ",
      backend,
      " tensor, got one on ",
      device_tensor.device());
  TORCH_CHECK(
      device_tensor.layout() == c10::kStrided && device_tensor.has_storage(),
      "host_view supports strided tensors with storage only, got layout ",
      device_tensor.layout());

  const c10::Storage& storage = device_tensor.storage();
  const void* device_base = storage.data_ptr().get();

  c10::DataPtr host_data(nullptr, c10::Device(c10::DeviceType::CPU));
  if (device_base != nullptr) {
    void* host_base = translate_device_address(device_base);
    if (host_base == nullptr && !device_memory_is_host_addressable()) {
      refuse_host_access("host_view");
    }
    TORCH_CHECK(
        host_base != nullptr,
        "host_view: the storage of this ",
        backend,
        " tensor (",
        device_base,
        ") was not allocated by the ",
        backend,
        " runtime, so it has no host view");
    if (wait) {
      wait_for_current_stream(device_of_address(device_base)); // see host_address
    }
    // The view holds a reference to the device storage: a kernel (or
    // anything it hands the view to) can keep it without the memory being
    // freed or reused underneath it.
    c10::StorageImpl* keep_alive = c10::Storage(storage).unsafeReleaseStorageImpl();
    host_data = c10::DataPtr(
        host_base,
        keep_alive,
        &release_device_storage,
        c10::Device(c10::DeviceType::CPU));
  }

  c10::Storage host_storage(
      c10::Storage::use_byte_size_t(),
      storage.nbytes(),
      std::move(host_data),
      /*allocator=*/nullptr,
      /*resizable=*/false);
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      std::move(host_storage),
      c10::DispatchKeySet(c10::DispatchKey::CPU),
      device_tensor.dtype());
  impl->set_sizes_and_strides(
      device_tensor.sizes(), device_tensor.strides(), device_tensor.storage_offset());
  // Lazy conjugation / negation are part of the value; keep them.
  impl->_set_conj(device_tensor.is_conj());
  impl->_set_neg(device_tensor.is_neg());
  return at::Tensor(std::move(impl));
}

} // namespace

at::Tensor host_view(const at::Tensor& device_tensor) {
  return make_host_view(device_tensor, /*wait=*/true);
}

at::Tensor launch_host_view(const at::Tensor& device_tensor) {
  return make_host_view(device_tensor, /*wait=*/false);
}

at::Tensor host_view_or_undefined(const at::Tensor& device_tensor) {
  return device_tensor.defined() ? host_view(device_tensor) : at::Tensor();
}

c10::Stream copy_bytes_async(void* dst, const void* src, size_t nbytes, CopyKind kind) {
  const void* device_side = kind == CopyKind::HostToDevice ? dst : src;
  const c10::DeviceIndex device = device_of_address(device_side);
  TORCH_CHECK(
      device >= 0,
      "copy_bytes: ",
      device_side,
      " is not ",
      c10::get_privateuse1_backend(),
      " device memory");
  c10::DeviceIndex device_on_stream = device;
  if (kind == CopyKind::DeviceToDevice) {
    const c10::DeviceIndex destination = device_of_address(dst);
    TORCH_CHECK(destination >= 0, "copy_bytes: ", dst, " is not ", c10::get_privateuse1_backend(), " device memory");
    if (destination != device) {
      wait_for_current_stream(device); // the source's pending writes
    }
    device_on_stream = destination;
  }
  const drvMemcpyKind driver_kind = kind == CopyKind::HostToDevice ? drvMemcpyHostToDevice
      : kind == CopyKind::DeviceToHost                            ? drvMemcpyDeviceToHost
                                                                  : drvMemcpyDeviceToDevice;
  const c10::Stream stream = current_stream(device_on_stream);
  if (kind != CopyKind::DeviceToDevice && capture_underway()) {
    // A replay would read or write the host memory of this call, which by
    // then holds other values or is gone.
    refuse_if_captured(driver_stream(stream), "copies between host and device memory");
  }
  count_host_traffic(kind == CopyKind::DeviceToHost ? nbytes : 0, kind == CopyKind::HostToDevice ? nbytes : 0);
  if (nbytes > 0) {
    const DeviceActivityScope activity("copy", device_on_stream, "drvMemcpyAsync");
    SCAFFOLD_DRIVER_CHECK(drvMemcpyAsync(dst, src, nbytes, driver_kind, driver_stream(stream)));
  }
  return stream;
}

void copy_bytes(void* dst, const void* src, size_t nbytes, CopyKind kind) {
  if (nbytes == 0) {
    return;
  }
  synchronize_stream(copy_bytes_async(dst, src, nbytes, kind));
}

// ---- Staging ---------------------------------------------------------------------

int64_t span_elements(const at::Tensor& t) {
  if (t.numel() == 0) {
    return 0;
  }
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    last += (t.size(d) - 1) * t.stride(d);
  }
  return last + 1;
}

namespace {

// A CPU tensor with `device_tensor`'s layout over `buffer` (its span).
at::Tensor over_span(const at::Tensor& buffer, const at::Tensor& device_tensor) {
  at::Tensor staged = buffer.as_strided(device_tensor.sizes(), device_tensor.strides(), 0);
  staged._set_conj(device_tensor.is_conj());
  staged._set_neg(device_tensor.is_neg());
  return staged;
}

at::Tensor span_buffer(const at::Tensor& device_tensor) {
  TORCH_CHECK(
      device_tensor.device().type() == c10::DeviceType::PrivateUse1 && device_tensor.layout() == c10::kStrided,
      "staging: expected a strided ", c10::get_privateuse1_backend(), " tensor, got one on ", device_tensor.device());
  return at::empty({span_elements(device_tensor)}, at::TensorOptions().dtype(device_tensor.dtype()));
}

} // namespace

at::Tensor staged_empty(const at::Tensor& device_tensor) {
  return over_span(span_buffer(device_tensor), device_tensor);
}

at::Tensor staged_copy(const at::Tensor& device_tensor) {
  at::Tensor buffer = span_buffer(device_tensor);
  copy_bytes(buffer.data_ptr(), device_tensor.const_data_ptr(), buffer.nbytes(), CopyKind::DeviceToHost);
  return over_span(buffer, device_tensor);
}

void write_back(const at::Tensor& staged, const at::Tensor& device_tensor) {
  const size_t nbytes = static_cast<size_t>(span_elements(device_tensor)) * device_tensor.itemsize();
  TORCH_INTERNAL_ASSERT(
      staged.storage_offset() == 0 && staged.sizes() == device_tensor.sizes() &&
          staged.strides() == device_tensor.strides() && staged.storage().nbytes() >= nbytes,
      "write_back: the staged tensor's layout changed");
  copy_bytes(device_tensor.data_ptr(), staged.storage().data(), nbytes, CopyKind::HostToDevice);
}

void fill_bytes_async(void* dst, const void* pattern, size_t pattern_size, size_t nbytes) {
  const c10::DeviceIndex device = device_of_address(dst);
  TORCH_CHECK(device >= 0, "fill_bytes_async: ", dst, " is not ", c10::get_privateuse1_backend(), " device memory");
  if (nbytes == 0) {
    return;
  }
  const c10::Stream stream = current_stream(device);
  const DeviceActivityScope activity("fill", device, "drvMemFillAsync");
  SCAFFOLD_DRIVER_CHECK(drvMemFillAsync(dst, pattern, pattern_size, nbytes, driver_stream(stream)));
}

} // namespace scaffold::runtime
