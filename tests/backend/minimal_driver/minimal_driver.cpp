// A deliberately minimal implementation of the driver API
// (runtime/driver/scaffold_driver.h), used by test_driver_seam.py to prove
// that runtime/csrc depends on the API and nothing else: ordinary host
// memory (no protection), one device, and every stream fully synchronous --
// work runs on the calling thread before the call returns.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "scaffold_driver.h"

struct drvStream_st {
  int priority;
};
struct drvEvent_st {
  unsigned flags;
  bool recorded;
  std::chrono::steady_clock::time_point at;
};

namespace {

thread_local std::string t_message;
drvStream_st g_default_stream{0};
std::mutex g_mutex;
std::map<uintptr_t, size_t> g_allocations; // start -> size

drvError_t fail(drvError_t error, const char* message) {
  t_message = message;
  return error;
}

bool find(const void* ptr) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_allocations.upper_bound(address);
  if (it == g_allocations.begin()) {
    return false;
  }
  --it;
  return address < it->first + it->second;
}

} // namespace

extern "C" {

const char* drvGetErrorName(drvError_t error) {
  return error == drvSuccess ? "drvSuccess" : "minimal driver error";
}
const char* drvGetLastErrorMessage(void) {
  return t_message.c_str();
}

drvError_t drvGetDeviceCount(int* count) {
  *count = 1;
  return drvSuccess;
}
drvError_t drvGetDevice(int* device) {
  *device = 0;
  return drvSuccess;
}
drvError_t drvSetDevice(int device) {
  return device == 0 ? drvSuccess : fail(drvErrorInvalidDevice, "one device only");
}
drvError_t drvGetDeviceProperties(drvDeviceProperties* props, int device) {
  if (device != 0) {
    return fail(drvErrorInvalidDevice, "one device only");
  }
  *props = drvDeviceProperties{};
  std::strcpy(props->name, "minimal");
  props->total_memory = size_t{1} << 30;
  props->capability_major = 0;
  props->capability_minor = 1;
  props->multiprocessor_count = 1;
  return drvSuccess;
}
drvError_t drvDeviceSynchronize(void) {
  return drvSuccess;
}
drvError_t drvGetLaunchBlocking(int* blocking) {
  *blocking = 1;
  return drvSuccess;
}

drvError_t drvMalloc(void** device_ptr, size_t size) {
  if (size == 0) {
    *device_ptr = nullptr;
    return drvSuccess;
  }
  void* ptr = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (ptr == nullptr) {
    return fail(drvErrorMemoryAllocation, "out of memory");
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_allocations.emplace(reinterpret_cast<uintptr_t>(ptr), size);
  *device_ptr = ptr;
  return drvSuccess;
}
drvError_t drvFree(void* device_ptr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_allocations.erase(reinterpret_cast<uintptr_t>(device_ptr)) == 0) {
    return fail(drvErrorInvalidHandle, "not an allocation");
  }
  std::free(device_ptr);
  return drvSuccess;
}
drvError_t drvPointerGetDevice(int* device, const void* ptr) {
  if (!find(ptr)) {
    return drvErrorInvalidHandle;
  }
  *device = 0;
  return drvSuccess;
}
drvError_t drvHostPointer(void** host_ptr, const void* device_ptr) {
  if (!find(device_ptr)) {
    return drvErrorInvalidHandle;
  }
  *host_ptr = const_cast<void*>(device_ptr);
  return drvSuccess;
}
drvError_t drvDeviceGetAttribute(int* value, drvDeviceAttribute attribute, int device) {
  if (device != 0) {
    return fail(drvErrorInvalidDevice, "one device");
  }
  if (attribute != drvDevAttrHostAddressableMemory) {
    return fail(drvErrorInvalidValue, "unknown attribute");
  }
  *value = 1; // ordinary host memory
  return drvSuccess;
}
drvError_t drvMemoryProtectionEnabled(int* enabled) {
  *enabled = 0;
  return drvSuccess;
}
drvError_t drvInForkedChild(int* forked) {
  *forked = 0;
  return drvSuccess;
}

drvError_t drvHostAlloc(void** host_ptr, size_t size) {
  *host_ptr = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096);
  return *host_ptr != nullptr ? drvSuccess : fail(drvErrorMemoryAllocation, "out of host memory");
}
drvError_t drvHostFree(void* host_ptr) {
  std::free(host_ptr);
  return drvSuccess;
}

drvError_t drvMemcpy(void* dst, const void* src, size_t size, drvMemcpyKind) {
  std::memmove(dst, src, size);
  return drvSuccess;
}
drvError_t drvMemcpyAsync(void* dst, const void* src, size_t size, drvMemcpyKind kind, drvStream_t) {
  return drvMemcpy(dst, src, size, kind);
}
drvError_t drvMemset(void* device_ptr, int value, size_t size) {
  std::memset(device_ptr, value, size);
  return drvSuccess;
}
drvError_t drvMemsetAsync(void* device_ptr, int value, size_t size, drvStream_t) {
  return drvMemset(device_ptr, value, size);
}
drvError_t drvMemFillAsync(void* device_ptr, const void* pattern, size_t pattern_size, size_t size, drvStream_t) {
  if (pattern_size == 0 || size % pattern_size != 0) {
    return fail(drvErrorInvalidValue, "size must be a multiple of the pattern's");
  }
  for (size_t at = 0; at < size; at += pattern_size) {
    std::memcpy(static_cast<char*>(device_ptr) + at, pattern, pattern_size);
  }
  return drvSuccess;
}
drvError_t drvLaunchHostFunc(drvStream_t, void (*fn)(void*), void* user_data) {
  fn(user_data);
  return drvSuccess;
}
drvError_t drvLimitKernelThreads(int threads) {
  return threads >= 1 ? drvSuccess : fail(drvErrorInvalidValue, "threads must be at least 1");  // kernels run inline
}

drvError_t drvDeviceGetStreamPriorityRange(int* least, int* greatest) {
  *least = 0;
  *greatest = 0;
  return drvSuccess;
}
drvError_t drvStreamCreate(drvStream_t* stream, int) {
  *stream = new (std::nothrow) drvStream_st{0};
  return *stream != nullptr ? drvSuccess : fail(drvErrorMemoryAllocation, "out of host memory");
}
drvError_t drvStreamDestroy(drvStream_t stream) {
  delete stream;
  return drvSuccess;
}
drvError_t drvStreamGetDefault(drvStream_t* stream, int device) {
  *stream = &g_default_stream;
  return device == 0 ? drvSuccess : fail(drvErrorInvalidDevice, "one device only");
}
drvError_t drvStreamQuery(drvStream_t) {
  return drvSuccess;
}
drvError_t drvStreamSynchronize(drvStream_t) {
  return drvSuccess;
}
drvError_t drvStreamGetPriority(drvStream_t stream, int* priority) {
  *priority = stream == nullptr ? 0 : stream->priority;
  return drvSuccess;
}
drvError_t drvStreamGetDevice(drvStream_t, int* device) {
  *device = 0;
  return drvSuccess;
}
drvError_t drvStreamWaitEvent(drvStream_t, drvEvent_t) {
  return drvSuccess;
}

drvError_t drvEventCreate(drvEvent_t* event, unsigned flags) {
  *event = new (std::nothrow) drvEvent_st{flags, false, {}};
  return *event != nullptr ? drvSuccess : fail(drvErrorMemoryAllocation, "out of host memory");
}
drvError_t drvEventDestroy(drvEvent_t event) {
  delete event;
  return drvSuccess;
}
drvError_t drvEventRecord(drvEvent_t event, drvStream_t) {
  event->recorded = true;
  event->at = std::chrono::steady_clock::now();
  return drvSuccess;
}
drvError_t drvEventQuery(drvEvent_t) {
  return drvSuccess;
}
drvError_t drvEventSynchronize(drvEvent_t) {
  return drvSuccess;
}
drvError_t drvEventElapsedTime(float* ms, drvEvent_t start, drvEvent_t end) {
  if (!start->recorded || !end->recorded) {
    return fail(drvErrorInvalidHandle, "not recorded");
  }
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return drvSuccess;
}

drvError_t drvTestingPauseStream(drvStream_t, int) {
  return fail(drvErrorNotSupported, "the minimal driver is synchronous");
}
drvError_t drvTestingDeviceBusyTime(int, uint64_t*) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}

// Activity tracing is optional: this driver cannot time work, so a profile
// has host-side events only.
drvError_t drvActivityEnable(int) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}
drvError_t drvActivityGetTimestamp(uint64_t*) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}
drvError_t drvActivityPushCorrelationId(uint64_t) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}
drvError_t drvActivityPopCorrelationId(void) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}
drvError_t drvActivityFlush(drvActivityConsumer, void*, uint64_t*) {
  return fail(drvErrorNotSupported, "the minimal driver does not time work");
}

// Graphs are optional: without stream capture, torch's graph APIs raise.
drvError_t drvStreamBeginCapture(drvStream_t) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvStreamEndCapture(drvStream_t, drvGraph_t*) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvStreamGetCaptureStatus(drvStream_t, drvStreamCaptureStatus* status) {
  *status = drvStreamCaptureStatusNone;
  return drvSuccess;
}
drvError_t drvGraphGetNodeCount(drvGraph_t, size_t*) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvGraphDebugDotPrint(drvGraph_t, const char*) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvGraphDestroy(drvGraph_t) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvGraphInstantiate(drvGraphExec_t*, drvGraph_t) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvGraphLaunch(drvGraphExec_t, drvStream_t) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}
drvError_t drvGraphExecDestroy(drvGraphExec_t) {
  return fail(drvErrorNotSupported, "the minimal driver has no graphs");
}

// Native handles are optional: kernels here are host functions.
drvError_t drvStreamGetNativeHandle(drvStream_t, void**) {
  return fail(drvErrorNotSupported, "the minimal driver has no native handles");
}
drvError_t drvDeviceGetNativeHandle(int, void**, void**) {
  return fail(drvErrorNotSupported, "the minimal driver has no native handles");
}
drvError_t drvPointerGetNativeHandle(const void*, void**, size_t*) {
  return fail(drvErrorNotSupported, "the minimal driver has no native handles");
}

} // extern "C"
