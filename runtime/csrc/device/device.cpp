#include "device.h"

#include <array>
#include <atomic>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "status.h"

namespace scaffold::runtime {
namespace {

// Mirrors the driver's per-thread current device (drvGetDevice), so the hot
// path asks no one.
thread_local c10::DeviceIndex t_current_device = 0;

std::array<std::atomic<bool>, kMaxDevices> g_initialized{};

} // namespace

c10::DeviceIndex device_count() {
  // A function-local static: asked once, thread-safe. If the driver fails
  // (a malformed SCAFFOLD_DEVICE_COUNT) the initializer throws and every
  // later call asks again and throws again.
  static const c10::DeviceIndex count = [] {
    int n = 0;
    SCAFFOLD_DRIVER_CHECK(drvGetDeviceCount(&n));
    TORCH_CHECK(n <= kMaxDevices, "the driver reports ", n, " devices; at most ", kMaxDevices, " are supported");
    return static_cast<c10::DeviceIndex>(n);
  }();
  return count;
}

c10::DeviceIndex device_count_or_zero() noexcept {
  try {
    return device_count();
  } catch (...) {
    return 0;
  }
}

void check_device_index(c10::DeviceIndex index) {
  const auto count = device_count();
  TORCH_CHECK_INDEX(
      index >= 0 && index < count,
      "invalid ",
      c10::get_privateuse1_backend(),
      " device index ",
      static_cast<int>(index),
      ": ",
      count == 0 ? std::string("no devices are available")
                 : "valid indices are 0.." + std::to_string(count - 1),
      " (device count is set by SCAFFOLD_DEVICE_COUNT)");
}

c10::DeviceIndex resolve_device_index(c10::DeviceIndex index) {
  if (index == -1) {
    index = current_device();
  }
  check_device_index(index);
  return index;
}

c10::DeviceIndex current_device() {
  return t_current_device;
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  SCAFFOLD_DRIVER_CHECK(drvSetDevice(index));
  t_current_device = index;
  mark_device_initialized(index);
}

c10::DeviceIndex exchange_device(c10::DeviceIndex index) {
  const auto previous = t_current_device;
  if (index != previous) {
    set_device(index);
  }
  return previous;
}

void set_device_unchecked(c10::DeviceIndex index) noexcept {
  if (index == t_current_device) {
    return; // a guard restoring the device it never changed: every op's case
  }
  (void)drvSetDevice(index); // validated before; nothing to report here
  t_current_device = index;
}

c10::Device make_device(c10::DeviceIndex index) {
  return c10::Device(c10::DeviceType::PrivateUse1, index);
}

std::string device_string(c10::DeviceIndex index) {
  return c10::get_privateuse1_backend() + ":" + std::to_string(index);
}

bool is_device_initialized(c10::DeviceIndex index) noexcept {
  return index >= 0 && index < kMaxDevices &&
      g_initialized[index].load(std::memory_order_relaxed);
}

void mark_device_initialized(c10::DeviceIndex index) noexcept {
  if (index >= 0 && index < kMaxDevices) {
    g_initialized[index].store(true, std::memory_order_relaxed);
  }
}

} // namespace scaffold::runtime
