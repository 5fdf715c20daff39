// The OpenCL driver: device memory and pinned host memory.
//
// A device pointer is an address in a range reserved once per process with
// mmap(PROT_NONE, MAP_NORESERVE): address space only, no memory. Host code
// that dereferences a device pointer faults, as with a GPU, and the
// runtime's pointer arithmetic (data_ptr + offset) stays inside the
// allocation it started in. Each device has a slice of the range, so the
// device of an address is one subtraction and one division, without a lock
// (drvPointerGetDevice is called on every free).
//
// drvMalloc takes a page-aligned piece of the device's slice (first fit) and
// creates a cl_mem buffer of the requested size; a map from each piece's
// start address to its buffer resolves any address inside an allocation to
// (buffer, offset) for the copies and fills.
#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "opencl_driver.h"

namespace scaffold::opencl {
namespace {

constexpr uint64_t kPageSize = 4096;
// A device's slice of address space: this many times its memory (rounded up
// to a power of two), so first-fit fragmentation runs out of memory before
// it runs out of addresses. Address space costs nothing until mapped.
constexpr uint64_t kSliceOverMemory = 4;
constexpr uint64_t kMinSlice = uint64_t{1} << 30;

// The reserved range; set once, read without a lock.
struct Range {
  uintptr_t base = 0;
  uint64_t slice = 0; // bytes per device
  uint64_t size = 0; // device count * slice
};
std::atomic<const Range*> g_range{nullptr};

struct Allocation {
  cl_mem memory = nullptr;
  size_t size = 0; // as requested: the buffer's size
  uint64_t length = 0; // the piece of the slice it holds (whole pages)
  int device = 0;
};

struct DeviceMemory {
  std::map<uint64_t, uint64_t> unused; // offset in the slice -> length
  uint64_t allocated = 0; // bytes of buffers, against Device::global_memory
};

// Readers (copies, fills: resolve) share the lock; drvMalloc and drvFree
// take it alone.
struct Memory {
  std::shared_mutex mutex;
  std::map<uintptr_t, Allocation> allocations; // start address -> allocation
  std::vector<DeviceMemory> devices;
};

Memory& memory() {
  static auto* all = new Memory(); // leaked: device pointers may outlive statics
  return *all;
}

std::atomic<bool> g_forked_child{false};

void mark_forked_child() {
  g_forked_child.store(true, std::memory_order_relaxed);
}

uint64_t round_up_to_power_of_two(uint64_t value) {
  uint64_t power = 1;
  while (power < value) {
    power <<= 1;
  }
  return power;
}

// Called with memory().mutex held alone: the range, reserved at the first
// allocation.
drvError_t range(const Platform& p, const Range** out) {
  if (const Range* r = g_range.load(std::memory_order_acquire); r != nullptr) {
    *out = r;
    return drvSuccess;
  }
  uint64_t largest = 0;
  for (const Device& device : p.devices) {
    largest = std::max(largest, device.global_memory);
  }
  auto r = Range();
  r.slice = std::max(kMinSlice, round_up_to_power_of_two(largest) * kSliceOverMemory);
  r.size = r.slice * p.devices.size();
  void* base = mmap(nullptr, r.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    const int code = errno;
    return fail(
        drvErrorOsCall,
        "mmap (reserving " + std::to_string(r.size >> 30) + " GiB of address space for device pointers): " +
            std::strerror(code) + " (errno " + std::to_string(code) + ")");
  }
  r.base = reinterpret_cast<uintptr_t>(base);
  Memory& all = memory();
  all.devices.resize(p.devices.size());
  for (DeviceMemory& device : all.devices) {
    device.unused.emplace(0, r.slice);
  }
  // A forked child shares nothing of the parent's buffers: like CUDA,
  // device memory is refused there.
  pthread_atfork(nullptr, nullptr, &mark_forked_child);
  *out = new Range(r); // leaked, see memory()
  g_range.store(*out, std::memory_order_release);
  return drvSuccess;
}

std::optional<uint64_t> take(DeviceMemory& device, uint64_t length) {
  for (auto it = device.unused.begin(); it != device.unused.end(); ++it) {
    if (it->second >= length) {
      const uint64_t offset = it->first;
      const uint64_t rest = it->second - length;
      device.unused.erase(it);
      if (rest > 0) {
        device.unused.emplace(offset + length, rest);
      }
      return offset;
    }
  }
  return std::nullopt;
}

void give_back(DeviceMemory& device, uint64_t offset, uint64_t length) {
  auto it = device.unused.emplace(offset, length).first;
  if (auto next = std::next(it); next != device.unused.end() && it->first + it->second == next->first) {
    it->second += next->second;
    device.unused.erase(next);
  }
  if (it != device.unused.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      device.unused.erase(it);
    }
  }
}

std::string describe(const void* ptr, size_t size) {
  char text[64];
  std::snprintf(text, sizeof text, "%p (+%zu bytes)", ptr, size);
  return text;
}

} // namespace

drvError_t resolve(const void* ptr, size_t size, const char* what, Resolved* out) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  Memory& all = memory();
  std::shared_lock<std::shared_mutex> lock(all.mutex);
  auto it = all.allocations.upper_bound(address);
  if (it != all.allocations.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset < it->second.size && size <= it->second.size - offset) {
      clRetainMemObject(it->second.memory);
      out->memory = it->second.memory;
      out->offset = static_cast<size_t>(offset);
      return drvSuccess;
    }
  }
  return fail(
      drvErrorInvalidValue,
      std::string(what) + ": " + describe(ptr, size) + " is not inside one device allocation of this driver");
}

} // namespace scaffold::opencl

using namespace scaffold::opencl;

extern "C" {

drvError_t drvMalloc(void** device_ptr, size_t size) {
  if (device_ptr == nullptr) {
    return fail(drvErrorInvalidValue, "drvMalloc: null output pointer");
  }
  if (g_forked_child.load(std::memory_order_relaxed)) {
    return fail(drvErrorForkedProcess, "device memory cannot be used in a process forked after its first use");
  }
  const int device = current_device();
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  if (size == 0) {
    *device_ptr = nullptr;
    return drvSuccess;
  }
  const Platform* p = nullptr;
  platform(&p);
  const Device& d = p->devices[static_cast<size_t>(device)];
  if (size > d.max_allocation) {
    return fail(
        drvErrorMemoryAllocation,
        "drvMalloc: " + std::to_string(size) + " bytes exceed the device's largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE, " +
            std::to_string(d.max_allocation) + " bytes)");
  }
  Memory& all = memory();
  std::unique_lock<std::shared_mutex> lock(all.mutex);
  const Range* r = nullptr;
  if (drvError_t status = range(*p, &r); status != drvSuccess) {
    return status;
  }
  DeviceMemory& dm = all.devices[static_cast<size_t>(device)];
  // OpenCL implementations commit a buffer's memory at its first use, not at
  // clCreateBuffer: without this count an allocation past the device's
  // memory would succeed here and fail in a later copy.
  if (size > d.global_memory - std::min(d.global_memory, dm.allocated)) {
    return fail(
        drvErrorMemoryAllocation,
        "drvMalloc: out of device memory (" + std::to_string(size) + " bytes asked, " + std::to_string(dm.allocated) +
            " of " + std::to_string(d.global_memory) + " allocated)");
  }
  const uint64_t length = (size + kPageSize - 1) / kPageSize * kPageSize;
  const auto offset = take(dm, length);
  if (!offset) {
    return fail(drvErrorMemoryAllocation, "drvMalloc: the device's address range is exhausted (fragmented)");
  }
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(p->context, CL_MEM_READ_WRITE, size, nullptr, &status);
  if (status != CL_SUCCESS) {
    give_back(dm, *offset, length);
    return fail_cl("clCreateBuffer", status);
  }
  const uintptr_t start = r->base + static_cast<uint64_t>(device) * r->slice + *offset;
  all.allocations.emplace(start, Allocation{buffer, size, length, device});
  dm.allocated += size;
  *device_ptr = reinterpret_cast<void*>(start);
  return drvSuccess;
}

drvError_t drvFree(void* device_ptr) {
  if (device_ptr == nullptr) {
    return drvSuccess;
  }
  const auto start = reinterpret_cast<uintptr_t>(device_ptr);
  Memory& all = memory();
  int device = -1;
  {
    std::shared_lock<std::shared_mutex> lock(all.mutex);
    auto it = all.allocations.find(start);
    if (it == all.allocations.end()) {
      return fail(drvErrorInvalidHandle, "drvFree: not the start of a live allocation (double free?)");
    }
    device = it->second.device;
  }
  // Like cudaFree: waits for the device's work. Not from a host function,
  // which its own stream waits for: there the release below is enough, as
  // OpenCL frees a buffer only once the commands using it have finished.
  if (!in_host_function()) {
    if (drvError_t status = synchronize_device(device); status != drvSuccess) {
      return status;
    }
  }
  cl_mem buffer = nullptr;
  {
    std::unique_lock<std::shared_mutex> lock(all.mutex);
    auto it = all.allocations.find(start);
    if (it == all.allocations.end()) {
      return fail(drvErrorInvalidHandle, "drvFree: not the start of a live allocation (double free?)");
    }
    const Range* r = g_range.load(std::memory_order_acquire);
    DeviceMemory& dm = all.devices[static_cast<size_t>(device)];
    give_back(dm, start - r->base - static_cast<uint64_t>(device) * r->slice, it->second.length);
    dm.allocated -= it->second.size;
    buffer = it->second.memory;
    all.allocations.erase(it);
  }
  if (cl_int status = clReleaseMemObject(buffer); status != CL_SUCCESS) {
    return fail_cl("clReleaseMemObject", status);
  }
  return drvSuccess;
}

drvError_t drvPointerGetDevice(int* device, const void* ptr) {
  if (device == nullptr) {
    return fail(drvErrorInvalidValue, "drvPointerGetDevice: null output");
  }
  const Range* r = g_range.load(std::memory_order_acquire);
  // Unsigned wrap-around turns "below the base" into "past the end" as well.
  const uint64_t offset = r == nullptr ? 0 : reinterpret_cast<uintptr_t>(ptr) - r->base;
  if (r == nullptr || offset >= r->size) {
    return fail(drvErrorInvalidHandle, "not device memory of this driver");
  }
  *device = static_cast<int>(offset / r->slice);
  return drvSuccess;
}

drvError_t drvHostPointer(void** host_ptr, const void* device_ptr) {
  return fail(
      drvErrorNotSupported,
      "drvHostPointer: OpenCL device memory is not host-addressable; host code reaches it through copies");
}

drvError_t drvMemoryProtectionEnabled(int* enabled) {
  if (enabled == nullptr) {
    return fail(drvErrorInvalidValue, "drvMemoryProtectionEnabled: null output");
  }
  *enabled = 1; // device pointers name PROT_NONE address space
  return drvSuccess;
}

drvError_t drvInForkedChild(int* forked) {
  if (forked == nullptr) {
    return fail(drvErrorInvalidValue, "drvInForkedChild: null output");
  }
  *forked = g_forked_child.load(std::memory_order_relaxed) ? 1 : 0;
  return drvSuccess;
}

drvError_t drvHostAlloc(void** host_ptr, size_t size) {
  if (host_ptr == nullptr) {
    return fail(drvErrorInvalidValue, "drvHostAlloc: null output pointer");
  }
  // clEnqueue{Read,Write}Buffer take any host memory; page alignment is what
  // lets an implementation move it by DMA without a bounce buffer.
  const int status = posix_memalign(host_ptr, kPageSize, size == 0 ? kPageSize : size);
  if (status != 0) {
    return fail(
        status == ENOMEM ? drvErrorMemoryAllocation : drvErrorOsCall,
        "drvHostAlloc: posix_memalign: " + std::string(std::strerror(status)));
  }
  return drvSuccess;
}

drvError_t drvHostFree(void* host_ptr) {
  std::free(host_ptr);
  return drvSuccess;
}

drvError_t drvPointerGetNativeHandle(const void* device_ptr, void** native_memory, size_t* offset) {
  if (native_memory == nullptr || offset == nullptr) {
    return fail(drvErrorInvalidValue, "drvPointerGetNativeHandle: null output");
  }
  Resolved resolved;
  if (drvError_t status = resolve(device_ptr, 0, "drvPointerGetNativeHandle", &resolved); status != drvSuccess) {
    return status;
  }
  // The buffer lives as long as its allocation: the caller gets no reference
  // of its own (`resolved` drops the one it took).
  *native_memory = resolved.memory;
  *offset = resolved.offset;
  return drvSuccess;
}

} // extern "C"
