#include "hooks.h"

#include <algorithm>

#include <c10/util/Exception.h>

#include "allocator.h"
#include "device.h"
#include "generator.h"
#include "host_allocator.h"
#include "memory_access.h"

namespace scaffold::runtime {

void Hooks::init() const {
  // Surface configuration errors (e.g. a malformed SCAFFOLD_DEVICE_COUNT)
  // at first device use, with the variable's name in the message.
  (void)device_count();
  (void)memory_protection_enabled();
}

bool Hooks::isBuilt() const {
  return true;
}

bool Hooks::isAvailable() const {
  return device_count_or_zero() > 0;
}

bool Hooks::hasPrimaryContext(c10::DeviceIndex device_index) const {
  return is_device_initialized(device_index);
}

c10::DeviceIndex Hooks::deviceCount() const {
  return device_count_or_zero();
}

void Hooks::setCurrentDevice(c10::DeviceIndex device) const {
  set_device(device);
}

c10::DeviceIndex Hooks::getCurrentDevice() const {
  return current_device();
}

c10::DeviceIndex Hooks::exchangeDevice(c10::DeviceIndex device) const {
  return exchange_device(device);
}

c10::DeviceIndex Hooks::maybeExchangeDevice(c10::DeviceIndex device) const {
  // Same as exchange, but an invalid index is a no-op rather than an error.
  if (device < 0 || device >= device_count_or_zero()) {
    return current_device();
  }
  return exchange_device(device);
}

const at::Generator& Hooks::getDefaultGenerator(c10::DeviceIndex device_index) const {
  return default_generator(device_index);
}

at::Generator Hooks::getNewGenerator(c10::DeviceIndex device_index) const {
  return make_device_generator(device_index);
}

at::Allocator* Hooks::getPinnedMemoryAllocator() const {
  return pinned_host_allocator();
}

bool Hooks::isPinnedPtr(const void* data) const {
  return is_pinned_pointer(data);
}

at::Device Hooks::getDeviceFromPtr(void* data) const {
  const c10::DeviceIndex device = device_of_address(data);
  TORCH_CHECK(
      device >= 0,
      data,
      " is not ",
      c10::get_privateuse1_backend(),
      " device memory");
  return make_device(device);
}

void Hooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const {
  TORCH_CHECK(
      storage.resizable(),
      "Trying to resize storage that is not resizable");
  const c10::DeviceIndex device = storage.device().has_index()
      ? storage.device().index()
      : current_device();
  c10::DataPtr fresh = allocate_on_device(device, newsize);
  const size_t keep = std::min(storage.nbytes(), newsize);
  if (keep > 0 && storage.data_ptr().get() != nullptr) {
    copy_bytes(fresh.get(), storage.data_ptr().get(), keep, CopyKind::DeviceToDevice);
  }
  // The old allocation is released when its DataPtr is destroyed here.
  storage.set_data_ptr_noswap(std::move(fresh));
  storage.set_nbytes(newsize);
}

} // namespace scaffold::runtime
