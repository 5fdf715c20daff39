// Simulated devices: how many there are and which one each thread uses.
//
// The device count is fixed for the life of the process (like a real driver
// enumerating GPUs once). The current device is per thread, matching CUDA
// semantics that PyTorch code (device guards, autograd worker threads)
// relies on.
#pragma once

#include <string>

#include <c10/core/Device.h>

namespace scaffold::runtime {

// Hard upper bound; each device reserves its own slice of address space.
constexpr c10::DeviceIndex kMaxDevices = 64;
constexpr c10::DeviceIndex kDefaultDeviceCount = 2;

// Number of simulated devices: SCAFFOLD_DEVICE_COUNT, default 2.
// Throws c10::Error if the variable is malformed.
c10::DeviceIndex device_count();

// Same, but never throws: reports 0 devices on a configuration error
// (DeviceGuardImplInterface::deviceCount must not throw).
c10::DeviceIndex device_count_or_zero() noexcept;

// Throws a clear error unless 0 <= index < device_count().
void check_device_index(c10::DeviceIndex index);

// Maps -1 ("no index given") to the current device, then validates.
c10::DeviceIndex resolve_device_index(c10::DeviceIndex index);

// The calling thread's current device (0 until set).
c10::DeviceIndex current_device();

// Validates and makes `index` the calling thread's current device.
void set_device(c10::DeviceIndex index);

// set_device, returning the previous current device.
c10::DeviceIndex exchange_device(c10::DeviceIndex index);

// Sets the current device without validation; for noexcept paths (guard
// destructors) where `index` was validated before.
void set_device_unchecked(c10::DeviceIndex index) noexcept;

// c10::Device{PrivateUse1, index}.
c10::Device make_device(c10::DeviceIndex index);

// "<backend>:<index>" (e.g. "mydevice:1"), for messages.
std::string device_string(c10::DeviceIndex index);

// "Primary context": a device counts as initialized once it was made
// current or allocated memory. Mirrors CUDA's lazy per-device contexts so
// hasPrimaryContext() answers like a real backend.
bool is_device_initialized(c10::DeviceIndex index) noexcept;
void mark_device_initialized(c10::DeviceIndex index) noexcept;

} // namespace scaffold::runtime
