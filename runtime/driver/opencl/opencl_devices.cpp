// The OpenCL driver: errors, configuration, the platform and its devices.
//
// SCAFFOLD_OPENCL_PLATFORM=<index> picks a platform (clGetPlatformIDs'
// order); by default the first one with a GPU, CPU or accelerator device.
// SCAFFOLD_LAUNCH_BLOCKING=1 ends every enqueue with clFinish.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>

#include "opencl_driver.h"

namespace scaffold::opencl {
namespace {

thread_local std::string t_last_error;
thread_local int t_current_device = 0;

std::atomic<bool> g_opencl_lost{false};

void mark_opencl_lost() {
  g_opencl_lost.store(true, std::memory_order_relaxed);
}

const char* cl_error_name(cl_int code) {
  switch (code) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case CL_MEM_COPY_OVERLAP: return "CL_MEM_COPY_OVERLAP";
    case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE_TYPE: return "CL_INVALID_DEVICE_TYPE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_QUEUE_PROPERTIES: return "CL_INVALID_QUEUE_PROPERTIES";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_PROPERTY: return "CL_INVALID_PROPERTY";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR"; // the ICD loader: no vendor installed
  }
  return "CL error";
}

std::string cl_message(const char* call, cl_int code) {
  return std::string(call) + ": " + cl_error_name(code) + " (" + std::to_string(code) + ")";
}

const char* env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// SCAFFOLD_LAUNCH_BLOCKING: 1/0, true/false, on/off, yes/no, any case.
bool read_launch_blocking(std::string& error) {
  const char* value = env_value("SCAFFOLD_LAUNCH_BLOCKING");
  if (value == nullptr) {
    return false;
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
  error = std::string("SCAFFOLD_LAUNCH_BLOCKING='") + value + "' is not a flag (use 1/0, true/false, on/off, yes/no)";
  return false;
}

constexpr cl_device_type kDeviceTypes = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_ACCELERATOR;

// The devices of `platform` that the driver uses; none when it has none.
std::vector<cl_device_id> devices_of(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, kDeviceTypes, 0, nullptr, &count) != CL_SUCCESS || count == 0) {
    return {};
  }
  std::vector<cl_device_id> ids(count);
  if (clGetDeviceIDs(platform, kDeviceTypes, count, ids.data(), nullptr) != CL_SUCCESS) {
    return {};
  }
  return ids;
}

template <class T>
T device_info(cl_device_id id, cl_device_info what) {
  T value{};
  clGetDeviceInfo(id, what, sizeof value, &value, nullptr);
  return value;
}

std::string device_string(cl_device_id id, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return {};
  }
  std::string text(size, '\0');
  clGetDeviceInfo(id, what, size, text.data(), nullptr);
  text.resize(std::strlen(text.c_str()));
  return text;
}

Device describe(cl_device_id id) {
  Device device;
  device.id = id;
  device.name = device_string(id, CL_DEVICE_NAME);
  device.global_memory = device_info<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
  device.max_allocation = device_info<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  device.compute_units = static_cast<int>(std::max<cl_uint>(1, device_info<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS)));
  // "OpenCL <major>.<minor> <vendor-specific>"; 1.2 (what the driver needs) if unreadable.
  int major = 0;
  int minor = 0;
  if (std::sscanf(device_string(id, CL_DEVICE_VERSION).c_str(), "OpenCL %d.%d", &major, &minor) == 2) {
    device.version_major = major;
    device.version_minor = minor;
  }
  return device;
}

// Fills `p`; a non-empty return is the configuration error.
std::string discover(Platform& p) {
  std::string error;
  p.launch_blocking = read_launch_blocking(error);
  if (!error.empty()) {
    return error;
  }
  cl_uint count = 0;
  // CL_PLATFORM_NOT_FOUND_KHR from the ICD loader: no OpenCL implementation
  // is installed, and there are no devices.
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    return {};
  }
  std::vector<cl_platform_id> platforms(count);
  if (cl_int status = clGetPlatformIDs(count, platforms.data(), nullptr); status != CL_SUCCESS) {
    return cl_message("clGetPlatformIDs", status);
  }
  std::vector<cl_device_id> ids;
  if (const char* chosen = env_value("SCAFFOLD_OPENCL_PLATFORM"); chosen != nullptr) {
    char* end = nullptr;
    errno = 0;
    const long index = std::strtol(chosen, &end, 10);
    if (errno != 0 || *end != '\0' || index < 0 || index >= static_cast<long>(count)) {
      return std::string("SCAFFOLD_OPENCL_PLATFORM='") + chosen + "' is not a platform index (this machine has " +
          std::to_string(count) + " OpenCL platform(s): 0.." + std::to_string(count - 1) + ")";
    }
    ids = devices_of(platforms[static_cast<size_t>(index)]);
  } else {
    for (cl_platform_id candidate : platforms) {
      if (ids = devices_of(candidate); !ids.empty()) {
        break;
      }
    }
  }
  if (ids.empty()) {
    return {};
  }
  cl_int status = CL_SUCCESS;
  p.context = clCreateContext(nullptr, static_cast<cl_uint>(ids.size()), ids.data(), nullptr, nullptr, &status);
  if (status != CL_SUCCESS) {
    return cl_message("clCreateContext", status);
  }
  for (cl_device_id id : ids) {
    p.devices.push_back(describe(id));
  }
  // OpenCL's own threads (and so every queue) are gone in a forked child.
  pthread_atfork(nullptr, nullptr, &mark_opencl_lost);
  return {};
}

} // namespace

drvError_t fail(drvError_t error, std::string message) {
  t_last_error = std::move(message);
  return error;
}

drvError_t fail_cl(const char* call, cl_int code) {
  drvError_t error = drvErrorInvalidValue;
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      error = drvErrorMemoryAllocation;
      break;
    case CL_INVALID_COMMAND_QUEUE:
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_EVENT:
    case CL_INVALID_CONTEXT:
      error = drvErrorInvalidHandle;
      break;
    case CL_INVALID_DEVICE:
    case CL_DEVICE_NOT_AVAILABLE:
      error = drvErrorInvalidDevice;
      break;
  }
  return fail(error, cl_message(call, code));
}

drvError_t checked(cl_int status, const char* call) {
  return status == CL_SUCCESS ? drvSuccess : fail_cl(call, status);
}

drvError_t platform(const Platform** out) {
  struct Discovered {
    Platform platform;
    std::string error;
  };
  // Leaked: device pointers and default streams outlive static destructors.
  static const auto* found = [] {
    auto* d = new Discovered();
    d->error = discover(d->platform);
    return d;
  }();
  if (!found->error.empty()) {
    return fail(drvErrorConfiguration, found->error);
  }
  *out = &found->platform;
  return drvSuccess;
}

drvError_t check_device(int device) {
  const Platform* p = nullptr;
  if (drvError_t status = platform(&p); status != drvSuccess) {
    return status;
  }
  const int count = static_cast<int>(p->devices.size());
  if (device < 0 || device >= count) {
    return fail(
        drvErrorInvalidDevice,
        "invalid device index " + std::to_string(device) + ": " +
            (count == 0 ? std::string("no OpenCL devices are available")
                        : "valid indices are 0.." + std::to_string(count - 1)) +
            " (the OpenCL platform's devices; SCAFFOLD_OPENCL_PLATFORM picks the platform)");
  }
  return drvSuccess;
}

int current_device() {
  return t_current_device;
}

drvError_t check_not_forked() {
  return g_opencl_lost.load(std::memory_order_relaxed)
      ? fail(drvErrorForkedProcess, "OpenCL cannot be used in a process forked after its first use")
      : drvSuccess;
}

} // namespace scaffold::opencl

using namespace scaffold::opencl;

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
  const Platform* p = nullptr;
  if (drvError_t status = platform(&p); status != drvSuccess) {
    return status;
  }
  *count = static_cast<int>(p->devices.size());
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
  const Platform* p = nullptr;
  platform(&p);
  const Device& d = p->devices[static_cast<size_t>(device)];
  *props = drvDeviceProperties{};
  std::snprintf(props->name, sizeof(props->name), "%s", d.name.c_str());
  props->total_memory = static_cast<size_t>(d.global_memory);
  props->capability_major = d.version_major;
  props->capability_minor = d.version_minor;
  props->multiprocessor_count = d.compute_units;
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
      *value = 0; // buffers are reached through enqueued copies only
      return drvSuccess;
  }
  return fail(drvErrorInvalidValue, "drvDeviceGetAttribute: unknown attribute " + std::to_string(static_cast<int>(attribute)));
}

drvError_t drvDeviceSynchronize(void) {
  return synchronize_device(t_current_device);
}

drvError_t drvGetLaunchBlocking(int* blocking) {
  if (blocking == nullptr) {
    return fail(drvErrorInvalidValue, "drvGetLaunchBlocking: null argument");
  }
  const Platform* p = nullptr;
  if (drvError_t status = platform(&p); status != drvSuccess) {
    return status;
  }
  *blocking = p->launch_blocking ? 1 : 0;
  return drvSuccess;
}

drvError_t drvDeviceGetNativeHandle(int device, void** context, void** native_device) {
  if (context == nullptr || native_device == nullptr) {
    return fail(drvErrorInvalidValue, "drvDeviceGetNativeHandle: null output");
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  const Platform* p = nullptr;
  platform(&p);
  *context = p->context;
  *native_device = p->devices[static_cast<size_t>(device)].id;
  return drvSuccess;
}

} // extern "C"
