// c10's device guard interface for PrivateUse1: how generic PyTorch code
// (c10::DeviceGuard, torch.Stream, torch.Event, torch.<backend>.device(...))
// switches devices and streams on this backend. Pure forwarding to device.h
// and stream.h; registered in registration.cpp. And DeviceGuard, the guard
// the generated kernel wrappers use.
#pragma once

#include <optional>

#include <c10/core/Device.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "device.h"

namespace scaffold::runtime {

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override;
  c10::Device exchangeDevice(c10::Device device) const override;
  c10::Device getDevice() const override;
  void setDevice(c10::Device device) const override;
  void uncheckedSetDevice(c10::Device device) const noexcept override;
  c10::DeviceIndex deviceCount() const noexcept override;

  c10::Stream getStream(c10::Device device) const override;
  c10::Stream getDefaultStream(c10::Device device) const override;
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool isHighPriority = false)
      const override;
  c10::Stream getNewStream(c10::Device device, int priority = 0) const override;
  c10::Stream exchangeStream(c10::Stream stream) const override;
  bool queryStream(const c10::Stream& stream) const override;
  void synchronizeStream(const c10::Stream& stream) const override;
  void synchronizeDevice(c10::DeviceIndex device_index) const override;

  void record(
      void** event,
      const c10::Stream& stream,
      c10::DeviceIndex device_index,
      c10::EventFlag flag) const override;
  void block(void* event, const c10::Stream& stream) const override;
  bool queryEvent(void* event) const override;
  void synchronizeEvent(void* event) const override;
  void destroyEvent(void* event, c10::DeviceIndex device_index) const noexcept override;
  double elapsedTime(void* event1, void* event2, c10::DeviceIndex device_index)
      const override;

  // Tensor.record_stream and c10 code (autograd, DDP) that hands memory to
  // another stream: see allocator.h.
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& stream)
      const override;

  // torch.accelerator.get_device_capability: every dtype (kernels run ATen's
  // CPU kernels, which cover them all).
  c10::DeviceCapability getDeviceCapability(c10::Device device) const override;
};

// The device guard of the generated kernel wrappers (the backend YAML's
// `device_guard.type`): makes the op's device current while its kernel runs
// and restores the previous one after, as c10::DeviceGuard and
// c10::OptionalDeviceGuard would -- without their virtual calls through
// DeviceGuardImplInterface, two per op (torchgen's CUDA wrappers use
// c10::cuda::OptionalCUDAGuard for the same reason). A device of another
// type (an op's first tensor may be a CPU scalar), none (an undefined
// optional tensor) or one without an index leaves the current device as it
// is, as c10's guards do for a CPU device.
class DeviceGuard {
 public:
  explicit DeviceGuard(c10::Device device) {
    enter(device);
  }
  explicit DeviceGuard(const std::optional<c10::Device>& device) {
    if (device.has_value()) {
      enter(*device);
    }
  }
  ~DeviceGuard() {
    if (original_ != kUnchanged) {
      set_device_unchecked(original_);
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  static constexpr c10::DeviceIndex kUnchanged = -1;

  void enter(c10::Device device) {
    if (device.type() == c10::DeviceType::PrivateUse1 && device.has_index()) {
      const c10::DeviceIndex previous = exchange_device(device.index()); // validates
      if (previous != device.index()) {
        original_ = previous;
      }
    }
  }

  c10::DeviceIndex original_ = kUnchanged;
};

} // namespace scaffold::runtime
