#include "memory_access.h"

#include <cstring>

#include <c10/core/DeviceType.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "allocator.h"

namespace scaffold::runtime {
namespace {

// Deleter of a host view's DataPtr: drops the reference to the device
// storage that the view held (see host_view).
void release_device_storage(void* storage_impl) {
  c10::intrusive_ptr<c10::StorageImpl>::reclaim(
      static_cast<c10::StorageImpl*>(storage_impl));
}

} // namespace

bool is_device_pointer(const void* ptr) noexcept {
  return translate_device_address(ptr) != nullptr;
}

void* host_address(const void* device_ptr) {
  void* host = translate_device_address(device_ptr);
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

at::Tensor host_view(const at::Tensor& device_tensor) {
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
    TORCH_CHECK(
        host_base != nullptr,
        "host_view: the storage of this ",
        backend,
        " tensor (",
        device_base,
        ") was not allocated by the ",
        backend,
        " runtime, so it has no host view");
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

at::Tensor host_view_or_undefined(const at::Tensor& device_tensor) {
  return device_tensor.defined() ? host_view(device_tensor) : at::Tensor();
}

void copy_bytes(void* dst, const void* src, size_t nbytes, CopyKind kind) {
  if (nbytes == 0) {
    return;
  }
  void* host_dst = kind == CopyKind::DeviceToHost ? dst : host_address(dst);
  const void* host_src = kind == CopyKind::HostToDevice ? src : host_address(src);
  if (kind == CopyKind::DeviceToDevice) {
    std::memmove(host_dst, host_src, nbytes);
  } else {
    std::memcpy(host_dst, host_src, nbytes);
  }
}

} // namespace scaffold::runtime
