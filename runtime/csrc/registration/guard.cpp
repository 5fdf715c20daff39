#include "guard.h"

#include <c10/util/Exception.h>

#include "allocator.h"
#include "device.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

c10::DeviceIndex checked_index(c10::Device device) {
  TORCH_CHECK(
      device.type() == c10::DeviceType::PrivateUse1,
      "expected a ",
      c10::get_privateuse1_backend(),
      " device, got ",
      device);
  // A device without an index (just the backend name) means the current one.
  return device.has_index() ? device.index() : current_device();
}

} // namespace

c10::DeviceType GuardImpl::type() const {
  return c10::DeviceType::PrivateUse1;
}

c10::Device GuardImpl::exchangeDevice(c10::Device device) const {
  return make_device(exchange_device(checked_index(device)));
}

c10::Device GuardImpl::getDevice() const {
  return make_device(current_device());
}

void GuardImpl::setDevice(c10::Device device) const {
  set_device(checked_index(device));
}

void GuardImpl::uncheckedSetDevice(c10::Device device) const noexcept {
  if (device.has_index()) {
    set_device_unchecked(device.index());
  }
}

c10::DeviceIndex GuardImpl::deviceCount() const noexcept {
  return device_count_or_zero();
}

c10::Stream GuardImpl::getStream(c10::Device device) const {
  return current_stream(checked_index(device));
}

c10::Stream GuardImpl::getDefaultStream(c10::Device device) const {
  return default_stream(checked_index(device));
}

c10::Stream GuardImpl::getStreamFromGlobalPool(c10::Device device, bool isHighPriority)
    const {
  return stream_from_pool(checked_index(device), isHighPriority);
}

c10::Stream GuardImpl::getNewStream(c10::Device device, int priority) const {
  return new_stream(checked_index(device), priority);
}

c10::Stream GuardImpl::exchangeStream(c10::Stream stream) const {
  return exchange_stream(stream);
}

bool GuardImpl::queryStream(const c10::Stream& stream) const {
  return query_stream(stream);
}

void GuardImpl::synchronizeStream(const c10::Stream& stream) const {
  synchronize_stream(stream);
}

void GuardImpl::synchronizeDevice(c10::DeviceIndex device_index) const {
  synchronize_device(device_index);
}

void GuardImpl::record(
    void** event,
    const c10::Stream& stream,
    c10::DeviceIndex device_index,
    c10::EventFlag flag) const {
  record_event(event, stream, device_index, flag);
}

void GuardImpl::block(void* event, const c10::Stream& stream) const {
  block_on_event(event, stream);
}

bool GuardImpl::queryEvent(void* event) const {
  return query_event(event);
}

void GuardImpl::synchronizeEvent(void* event) const {
  synchronize_event(event);
}

void GuardImpl::destroyEvent(void* event, c10::DeviceIndex /*device_index*/)
    const noexcept {
  destroy_event(event);
}

double GuardImpl::elapsedTime(void* event1, void* event2, c10::DeviceIndex device_index)
    const {
  return event_elapsed_ms(event1, event2, device_index);
}

void GuardImpl::recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& stream)
    const {
  record_stream(data_ptr, stream);
}

c10::DeviceCapability GuardImpl::getDeviceCapability(c10::Device device) const {
  (void)checked_index(device);
  return c10::DeviceCapability();
}

} // namespace scaffold::runtime
