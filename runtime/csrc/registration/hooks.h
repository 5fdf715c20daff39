// at::PrivateUse1HooksInterface: the questions ATen asks an out-of-tree
// backend directly (default generators, pinned memory, which device owns a
// pointer, storage resizing, primary contexts). Pure forwarding to the
// runtime components; registered in registration.cpp.
#pragma once

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace scaffold::runtime {

struct Hooks final : public at::PrivateUse1HooksInterface {
  void init() const override;
  bool isBuilt() const override;
  bool isAvailable() const override;
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override;

  c10::DeviceIndex deviceCount() const override;
  void setCurrentDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex getCurrentDevice() const override;
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override;
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override;

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override;
  at::Generator getNewGenerator(c10::DeviceIndex device_index = -1) const override;

  at::Allocator* getPinnedMemoryAllocator() const override;
  bool isPinnedPtr(const void* data) const override;
  at::Device getDeviceFromPtr(void* data) const override;

  // Storage.resize_ on this device: allocate new, copy the overlap through
  // the runtime, swap the storage's data pointer.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override;
};

} // namespace scaffold::runtime
