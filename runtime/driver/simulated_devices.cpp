// The simulated driver: errors, configuration, devices.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <strings.h>

#include "simulated.h"

namespace scaffold::driver {
namespace {

thread_local std::string t_last_error;
thread_local int t_current_device = 0;

const char* env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// 1/0, true/false, on/off, yes/no, any case; false + error when malformed.
bool read_flag(const char* name, bool fallback, std::string& error) {
  const char* value = env_value(name);
  if (value == nullptr) {
    return fallback;
  }
  for (const char* yes : {"1", "true", "on", "yes"}) {
    if (strcasecmp(value, yes) == 0) {
      return true;
    }
  }
  for (const char* no : {"0", "false", "off", "no"}) {
    if (strcasecmp(value, no) == 0) {
      return false;
    }
  }
  if (error.empty()) {
    error = std::string(name) + "='" + value + "' is not a flag (use 1/0, true/false, on/off, yes/no)";
  }
  return fallback;
}

// The integer in the variable `name` when it is one in low..high that
// `valid` accepts; nullopt when the variable is unset or is not, the latter
// recorded in `error` as "NAME='value' <requirement>" (the first wins).
template <class Valid>
std::optional<long> read_integer(
    const char* name, long low, long high, Valid valid, const std::string& requirement, std::string& error) {
  const char* value = env_value(name);
  if (value == nullptr) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(value, &end, 10);
  if (errno == 0 && *end == '\0' && parsed >= low && parsed <= high && valid(parsed)) {
    return parsed;
  }
  if (error.empty()) {
    error = std::string(name) + "='" + value + "' " + requirement;
  }
  return std::nullopt;
}

int read_count(const char* name, int fallback, std::string& error) {
  const auto count = read_integer(
      name, 0, kMaxDevices, [](long) { return true; }, "must be an integer in 0.." + std::to_string(kMaxDevices), error);
  return count ? static_cast<int>(*count) : fallback;
}

// SCAFFOLD_DEVICE_MEMORY: `host` (the default: the host may address device
// memory through drvHostPointer) or `discrete` (it may not, as on a GPU).
bool read_discrete_memory(std::string& error) {
  const char* value = env_value("SCAFFOLD_DEVICE_MEMORY");
  if (value == nullptr || strcasecmp(value, "host") == 0) {
    return false;
  }
  if (strcasecmp(value, "discrete") == 0) {
    return true;
  }
  if (error.empty()) {
    error = std::string("SCAFFOLD_DEVICE_MEMORY='") + value +
        "' is not a memory mode (use host: the host addresses device memory, or discrete: it does not)";
  }
  return false;
}

// A power of two of GiB in 1..kMaxDeviceAddressSpanGiB, in bytes.
uint64_t read_span(const char* name, uint64_t fallback, std::string& error) {
  const auto gib = read_integer(
      name,
      1,
      static_cast<long>(kMaxDeviceAddressSpanGiB),
      [](long n) { return (n & (n - 1)) == 0; },
      "must be a power of two from 1 to " + std::to_string(kMaxDeviceAddressSpanGiB) + " (GiB of address space per device)",
      error);
  return gib ? static_cast<uint64_t>(*gib) << 30 : fallback;
}

// The host cores a stream worker computes with (simulated_threads.cpp): by
// default all but one while the host thread that drives the device works, as
// a GPU leaves the CPU to the program that launches its kernels, and all of
// them while it sleeps waiting for the device. SCAFFOLD_DEVICE_THREADS fixes
// the count for both.
void read_compute_threads(Config& c) {
  const long cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  const auto threads = read_integer(
      "SCAFFOLD_DEVICE_THREADS", 1, 4096, [](long) { return true; }, "must be an integer in 1..4096", c.error);
  c.compute_threads = static_cast<int>(threads.value_or(std::max(1L, cores - 1)));
  c.compute_threads_host_waiting = static_cast<int>(threads.value_or(cores));
}

} // namespace

const Config& config() {
  static const Config cfg = [] {
    Config c;
    c.device_count = read_count("SCAFFOLD_DEVICE_COUNT", 2, c.error);
    c.protect_memory = read_flag("SCAFFOLD_PROTECT_MEMORY", true, c.error);
    c.discrete_memory = read_discrete_memory(c.error);
    c.launch_blocking = read_flag("SCAFFOLD_LAUNCH_BLOCKING", false, c.error);
    c.device_span = read_span("SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB", kDefaultDeviceAddressSpan, c.error);
    read_compute_threads(c);
    c.physical_memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
        static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return c;
  }();
  return cfg;
}

drvError_t fail(drvError_t error, std::string message) {
  t_last_error = std::move(message);
  return error;
}

drvError_t fail_os(const char* what) {
  const int code = errno;
  return fail(drvErrorOsCall, std::string(what) + ": " + std::strerror(code) + " (errno " + std::to_string(code) + ")");
}

drvError_t check_config() {
  const Config& c = config();
  return c.error.empty() ? drvSuccess : fail(drvErrorConfiguration, c.error);
}

drvError_t check_device(int device) {
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  const int count = config().device_count;
  if (device < 0 || device >= count) {
    return fail(
        drvErrorInvalidDevice,
        "invalid device index " + std::to_string(device) + ": " +
            (count == 0 ? std::string("no devices are available")
                        : "valid indices are 0.." + std::to_string(count - 1)) +
            " (device count is set by SCAFFOLD_DEVICE_COUNT)");
  }
  return drvSuccess;
}

int current_device_unchecked() {
  return t_current_device;
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

const char* drvGetErrorName(drvError_t error) {
  switch (error) {
    case drvSuccess: return "drvSuccess";
    case drvErrorInvalidValue: return "drvErrorInvalidValue";
    case drvErrorInvalidDevice: return "drvErrorInvalidDevice";
    case drvErrorMemoryAllocation: return "drvErrorMemoryAllocation";
    case drvErrorInvalidHandle: return "drvErrorInvalidHandle";
    case drvErrorNotReady: return "drvErrorNotReady";
    case drvErrorOsCall: return "drvErrorOsCall";
    case drvErrorForkedProcess: return "drvErrorForkedProcess";
    case drvErrorNotSupported: return "drvErrorNotSupported";
    case drvErrorConfiguration: return "drvErrorConfiguration";
    case drvErrorStreamCaptureUnsupported: return "drvErrorStreamCaptureUnsupported";
    case drvErrorStreamCaptureInvalidated: return "drvErrorStreamCaptureInvalidated";
    case drvErrorStreamCaptureUnjoined: return "drvErrorStreamCaptureUnjoined";
  }
  return "unknown driver error";
}

const char* drvGetLastErrorMessage(void) {
  return t_last_error.c_str();
}

drvError_t drvGetDeviceCount(int* count) {
  if (count == nullptr) {
    return fail(drvErrorInvalidValue, "drvGetDeviceCount: null count");
  }
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  *count = config().device_count;
  return drvSuccess;
}

drvError_t drvGetDevice(int* device) {
  if (device == nullptr) {
    return fail(drvErrorInvalidValue, "drvGetDevice: null device");
  }
  *device = t_current_device;
  return drvSuccess;
}

drvError_t drvSetDevice(int device) {
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  t_current_device = device;
  return drvSuccess;
}

drvError_t drvGetDeviceProperties(drvDeviceProperties* props, int device) {
  if (props == nullptr) {
    return fail(drvErrorInvalidValue, "drvGetDeviceProperties: null props");
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  *props = drvDeviceProperties{};
  std::snprintf(props->name, sizeof(props->name), "Scaffold simulated device %d", device);
  props->total_memory = static_cast<size_t>(std::min<uint64_t>(config().physical_memory, config().device_span));
  props->capability_major = 1;
  props->capability_minor = 0;
  props->multiprocessor_count = config().compute_threads_host_waiting; // the most a kernel gets
  return drvSuccess;
}

drvError_t drvDeviceGetAttribute(int* value, drvDeviceAttribute attribute, int device) {
  if (value == nullptr) {
    return fail(drvErrorInvalidValue, "drvDeviceGetAttribute: null value");
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  switch (attribute) {
    case drvDevAttrHostAddressableMemory:
      *value = config().discrete_memory ? 0 : 1;
      return drvSuccess;
  }
  return fail(drvErrorInvalidValue, "drvDeviceGetAttribute: unknown attribute " + std::to_string(static_cast<int>(attribute)));
}

drvError_t drvDeviceGetNativeHandle(int device, void** context, void** native_device) {
  return fail(drvErrorNotSupported, "the simulated device has no native handles: its kernels are host functions (drvLaunchHostFunc)");
}

drvError_t drvDeviceSynchronize(void) {
  if (drvError_t status = refuse_if_device_captured(t_current_device, "drvDeviceSynchronize"); status != drvSuccess) {
    return status;
  }
  return synchronize_device(t_current_device);
}

drvError_t drvGetLaunchBlocking(int* blocking) {
  if (blocking == nullptr) {
    return fail(drvErrorInvalidValue, "drvGetLaunchBlocking: null argument");
  }
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  *blocking = config().launch_blocking ? 1 : 0;
  return drvSuccess;
}

} // extern "C"
