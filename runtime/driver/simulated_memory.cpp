// The simulated driver: device memory the host cannot touch by accident.
//
// Every allocation lives in host RAM (a memfd) mapped twice:
//   * the *device view* -- the address drvMalloc returns. It is mapped
//     PROT_NONE, so host code that dereferences a device pointer directly (a
//     kernel that forgot to translate, a CPU fallback handed a device tensor)
//     faults at once, as it would with a GPU.
//   * the *host view* -- a read/write mapping of the same pages, reached only
//     through drvHostPointer and the copy functions.
// Both views sit in two address ranges reserved once per process, at the
// same offset, so translating device -> host is one subtraction and one
// addition: no lock, no lookup, no syscall.
//
// SCAFFOLD_PROTECT_MEMORY=0 maps the device view read/write too, to measure
// the cost of protection (none on the hot path; the switch proves it).
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "simulated.h"

namespace scaffold::driver {
namespace {

// device_base + d * span + offset  <->  host_base + d * span + offset
struct Region {
  uintptr_t device_base = 0;
  uintptr_t host_base = 0;
  uint64_t size = 0; // device_count * span
  bool discrete = false; // SCAFFOLD_DEVICE_MEMORY=discrete: only launched work translates
};

thread_local bool t_running_device_work = false;

// Constant-initialized, so translation never waits on a static guard.
std::atomic<const Region*> g_region{nullptr};
std::atomic<bool> g_forked_child{false};

void mark_forked_child() {
  g_forked_child.store(true, std::memory_order_relaxed);
}

// PROT_NONE + MAP_NORESERVE: address space only, no memory, no commit
// charge. Allocations are later mapped over parts of it with MAP_FIXED.
void* reserve(void* at, uint64_t size) {
  const int fixed = at != nullptr ? MAP_FIXED : 0;
  return mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
}

drvError_t region(const Region** out) {
  if (const Region* r = g_region.load(std::memory_order_acquire); r != nullptr) {
    *out = r;
    return drvSuccess;
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (const Region* r = g_region.load(std::memory_order_acquire); r != nullptr) {
    *out = r;
    return drvSuccess;
  }
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  auto r = Region();
  r.size = static_cast<uint64_t>(config().device_count) * config().device_span;
  r.discrete = config().discrete_memory;
  if (r.size == 0) {
    return fail(drvErrorInvalidDevice, "no devices are available (SCAFFOLD_DEVICE_COUNT=0)");
  }
  // Under an address-space limit (ulimit -v, valgrind) the reservation is
  // what fails: say how much it was and what makes it smaller.
  const auto reserving = [&r](const char* range) {
    return "mmap (reserving the " + std::string(range) + " address range, " + std::to_string(r.size >> 30) +
        " GiB: SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB sets the GiB per device)";
  };
  void* device_view = reserve(nullptr, r.size);
  if (device_view == MAP_FAILED) {
    return fail_os(reserving("device").c_str());
  }
  void* host_view = reserve(nullptr, r.size);
  if (host_view == MAP_FAILED) {
    munmap(device_view, r.size);
    return fail_os(reserving("host").c_str());
  }
  r.device_base = reinterpret_cast<uintptr_t>(device_view);
  r.host_base = reinterpret_cast<uintptr_t>(host_view);
  // Allocations are MAP_SHARED: a forked child would write the parent's
  // device memory. Like CUDA, refuse device use in such children.
  pthread_atfork(nullptr, nullptr, &mark_forked_child);
  *out = new Region(r); // leaked: device pointers may outlive statics
  g_region.store(*out, std::memory_order_release);
  return drvSuccess;
}

// One device's slice: which address ranges are free, which are allocated.
struct DeviceMemory {
  std::mutex mutex;
  bool initialized = false;
  std::map<uint64_t, uint64_t> unused; // offset -> length
  std::map<uint64_t, uint64_t> allocations; // offset -> length

  void init() {
    if (!initialized) {
      unused.emplace(0, config().device_span);
      initialized = true;
    }
  }

  std::optional<uint64_t> take(uint64_t size) {
    for (auto it = unused.begin(); it != unused.end(); ++it) {
      if (it->second >= size) {
        const uint64_t offset = it->first;
        const uint64_t rest = it->second - size;
        unused.erase(it);
        if (rest > 0) {
          unused.emplace(offset + size, rest);
        }
        return offset;
      }
    }
    return std::nullopt;
  }

  void give_back(uint64_t offset, uint64_t size) {
    auto it = unused.emplace(offset, size).first;
    if (auto next = std::next(it); next != unused.end() && it->first + it->second == next->first) {
      it->second += next->second;
      unused.erase(next);
    }
    if (it != unused.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        unused.erase(it);
      }
    }
  }
};

DeviceMemory& device_memory(int device) {
  static auto* all = new std::array<DeviceMemory, kMaxDevices>(); // leaked, see region()
  return (*all)[device];
}

constexpr uint64_t kPageSize = 4096;

uint64_t slice(int device) {
  return static_cast<uint64_t>(device) * config().device_span;
}

// One memfd, mapped at the same offset in both views.
drvError_t map_views(const Region& r, int device, uint64_t offset, uint64_t size) {
  void* device_at = reinterpret_cast<void*>(r.device_base + slice(device) + offset);
  void* host_at = reinterpret_cast<void*>(r.host_base + slice(device) + offset);
  const std::string name = "scaffold-device-" + std::to_string(device);
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd == -1) {
    return fail_os("memfd_create");
  }
  drvError_t status = drvSuccess;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    status = fail_os("ftruncate (sizing device memory)");
  } else {
    const int device_prot = config().protect_memory ? PROT_NONE : PROT_READ | PROT_WRITE;
    if (mmap(device_at, size, device_prot, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
      status = fail_os("mmap (device view)");
    } else if (mmap(host_at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
      status = fail_os("mmap (host view)");
    }
  }
  if (status != drvSuccess) {
    reserve(device_at, size);
    reserve(host_at, size);
  }
  close(fd); // the mappings keep the pages alive
  return status;
}

} // namespace

RunningDeviceWork::RunningDeviceWork() noexcept : was_running_(t_running_device_work) {
  t_running_device_work = true;
}

RunningDeviceWork::~RunningDeviceWork() {
  t_running_device_work = was_running_;
}

void* translate(const void* device_ptr, size_t size) noexcept {
  const Region* r = g_region.load(std::memory_order_acquire);
  if (r == nullptr) {
    return nullptr;
  }
  // Unsigned wrap-around turns "below the base" into "too large" as well.
  const uint64_t offset = reinterpret_cast<uintptr_t>(device_ptr) - r->device_base;
  if (offset >= r->size || size > r->size - offset) {
    return nullptr;
  }
  return reinterpret_cast<void*>(r->host_base + offset);
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

drvError_t drvMalloc(void** device_ptr, size_t size) {
  if (device_ptr == nullptr) {
    return fail(drvErrorInvalidValue, "drvMalloc: null output pointer");
  }
  if (g_forked_child.load(std::memory_order_relaxed)) {
    return fail(drvErrorForkedProcess, "device memory cannot be used in a process forked after its first use");
  }
  const int device = current_device_unchecked();
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  if (size == 0) {
    *device_ptr = nullptr;
    return drvSuccess;
  }
  if (size > config().device_span) {
    return fail(drvErrorMemoryAllocation, "drvMalloc: request exceeds the device's address span");
  }
  const Region* r = nullptr;
  if (drvError_t status = region(&r); status != drvSuccess) {
    return status;
  }
  const uint64_t length = (size + kPageSize - 1) / kPageSize * kPageSize;
  DeviceMemory& memory = device_memory(device);
  std::lock_guard<std::mutex> lock(memory.mutex);
  memory.init();
  const auto offset = memory.take(length);
  if (!offset) {
    return fail(drvErrorMemoryAllocation, "drvMalloc: device address space exhausted");
  }
  if (drvError_t status = map_views(*r, device, *offset, length); status != drvSuccess) {
    memory.give_back(*offset, length);
    return status == drvErrorOsCall && errno == ENOMEM ? drvErrorMemoryAllocation : status;
  }
  memory.allocations.emplace(*offset, length);
  *device_ptr = reinterpret_cast<void*>(r->device_base + slice(device) + *offset);
  return drvSuccess;
}

drvError_t drvFree(void* device_ptr) {
  if (device_ptr == nullptr) {
    return drvSuccess;
  }
  int device = -1;
  if (drvError_t status = drvPointerGetDevice(&device, device_ptr); status != drvSuccess) {
    return status;
  }
  // Like cudaFree: work still queued may use the memory.
  if (drvError_t status = synchronize_device(device); status != drvSuccess) {
    return status;
  }
  const Region* r = g_region.load(std::memory_order_acquire);
  const uint64_t offset = reinterpret_cast<uintptr_t>(device_ptr) - r->device_base - slice(device);
  DeviceMemory& memory = device_memory(device);
  std::lock_guard<std::mutex> lock(memory.mutex);
  auto it = memory.allocations.find(offset);
  if (it == memory.allocations.end()) {
    return fail(drvErrorInvalidHandle, "drvFree: not the start of a live allocation (double free?)");
  }
  const uint64_t length = it->second;
  const uintptr_t device_at = r->device_base + slice(device) + offset;
  const uintptr_t host_at = r->host_base + slice(device) + offset;
  if (reserve(reinterpret_cast<void*>(device_at), length) == MAP_FAILED ||
      reserve(reinterpret_cast<void*>(host_at), length) == MAP_FAILED) {
    return fail_os("mmap (releasing device memory)");
  }
  memory.allocations.erase(it);
  memory.give_back(offset, length);
  return drvSuccess;
}

drvError_t drvPointerGetDevice(int* device, const void* ptr) {
  if (device == nullptr) {
    return fail(drvErrorInvalidValue, "drvPointerGetDevice: null output");
  }
  const Region* r = g_region.load(std::memory_order_acquire);
  const uint64_t offset = r == nullptr ? 0 : reinterpret_cast<uintptr_t>(ptr) - r->device_base;
  if (r == nullptr || offset >= r->size) {
    return fail(drvErrorInvalidHandle, "not device memory of this driver");
  }
  *device = static_cast<int>(offset / config().device_span);
  return drvSuccess;
}

drvError_t drvHostPointer(void** host_ptr, const void* device_ptr) {
  void* host = translate(device_ptr, 0);
  if (host == nullptr) {
    return drvErrorInvalidHandle; // hot path: no message string
  }
  if (g_region.load(std::memory_order_relaxed)->discrete && !t_running_device_work) {
    return fail(
        drvErrorNotSupported,
        "drvHostPointer: device memory is not host-addressable (SCAFFOLD_DEVICE_MEMORY=discrete); "
        "host code reaches it through copies, only launched work addresses it");
  }
  *host_ptr = host;
  return drvSuccess;
}

drvError_t drvPointerGetNativeHandle(const void* device_ptr, void** native_memory, size_t* offset) {
  return fail(drvErrorNotSupported, "the simulated device has no native handles: its kernels are host functions (drvLaunchHostFunc)");
}

drvError_t drvMemoryProtectionEnabled(int* enabled) {
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  *enabled = config().protect_memory ? 1 : 0;
  return drvSuccess;
}

drvError_t drvInForkedChild(int* forked) {
  *forked = g_forked_child.load(std::memory_order_relaxed) ? 1 : 0;
  return drvSuccess;
}

drvError_t drvHostAlloc(void** host_ptr, size_t size) {
  if (host_ptr == nullptr) {
    return fail(drvErrorInvalidValue, "drvHostAlloc: null output pointer");
  }
  // The simulator's DMA engine is the host: any page-aligned memory will do.
  const int status = posix_memalign(host_ptr, kPageSize, size == 0 ? kPageSize : size);
  if (status != 0) {
    errno = status;
    return status == ENOMEM ? fail(drvErrorMemoryAllocation, "drvHostAlloc: out of host memory")
                            : fail_os("posix_memalign");
  }
  return drvSuccess;
}

drvError_t drvHostFree(void* host_ptr) {
  std::free(host_ptr);
  return drvSuccess;
}

} // extern "C"
