#include "allocator.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "device.h"
#include "env.h"
#include "status.h"

namespace scaffold::runtime {
namespace {

// ---- Size policy (see allocator.h) -----------------------------------------
constexpr size_t kBlockGranularity = 512; // size classes and alignment
constexpr size_t kSmallRequest = size_t{1} << 20; // <= 1 MiB: small pool
constexpr size_t kSmallSegment = size_t{2} << 20; // small pool segment
constexpr size_t kLargeSegment = size_t{20} << 20; // shared large segment
constexpr size_t kOwnSegmentFrom = size_t{10} << 20; // own segment from here
constexpr size_t kSegmentGranularity = size_t{2} << 20;

constexpr size_t round_up(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

std::string format_bytes(uint64_t bytes) {
  char buffer[64];
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  std::snprintf(
      buffer, sizeof(buffer), "%.2f MiB (%" PRIu64 " bytes)", mib, bytes);
  return buffer;
}

// ---- Process-wide configuration, read once ---------------------------------
struct Config {
  bool protect = true;
  uint64_t default_capacity = 0;
};

const Config& config() {
  static const Config cfg = [] {
    Config c;
    c.protect = env::get_flag("SCAFFOLD_PROTECT_MEMORY", true);
    const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
        static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    c.default_capacity = env::get_bytes(
        "SCAFFOLD_DEVICE_MEMORY_CAPACITY",
        std::min<uint64_t>(physical, kDeviceAddressSpan));
    TORCH_CHECK(
        c.default_capacity <= kDeviceAddressSpan,
        "SCAFFOLD_DEVICE_MEMORY_CAPACITY=",
        c.default_capacity,
        " exceeds the per-device maximum of ",
        kDeviceAddressSpan,
        " bytes");
    return c;
  }();
  return cfg;
}

// ---- The two reserved address ranges ---------------------------------------
// device_base + d * span + offset  <->  host_base + d * span + offset
struct Region {
  uintptr_t device_base = 0;
  uintptr_t host_base = 0;
  uint64_t size = 0; // device_count * kDeviceAddressSpan
};

// Constant-initialized, so translation never waits on a static guard.
std::atomic<const Region*> g_region{nullptr};

// PROT_NONE + MAP_NORESERVE: claims address space only, no memory, no
// commit charge. Segments are later mapped over parts of it with MAP_FIXED.
void* reserve_address_range(uint64_t size) {
  return SCAFFOLD_CHECK_RESULT(
      mmap(
          nullptr,
          size,
          PROT_NONE,
          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
          -1,
          0),
      MAP_FAILED);
}

// Puts a reserved-but-empty mapping back over [address, address + size),
// dropping whatever segment was mapped there.
void unreserve_in_place(uintptr_t address, uint64_t size) {
  SCAFFOLD_CHECK_RESULT(
      mmap(
          reinterpret_cast<void*>(address),
          size,
          PROT_NONE,
          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
          -1,
          0),
      MAP_FAILED);
}

// Set in a child forked after device memory existed (see in_bad_fork).
std::atomic<bool> g_bad_fork{false};

void mark_child_as_bad_fork() {
  g_bad_fork.store(true, std::memory_order_relaxed);
}

const Region& region() {
  const Region* existing = g_region.load(std::memory_order_acquire);
  if (existing != nullptr) {
    return *existing;
  }
  static std::once_flag once;
  std::call_once(once, [] {
    auto* r = new Region(); // leaked: device pointers may outlive statics
    r->size = static_cast<uint64_t>(device_count()) * kDeviceAddressSpan;
    TORCH_CHECK(r->size > 0, "no ", c10::get_privateuse1_backend(), " devices");
    r->device_base = reinterpret_cast<uintptr_t>(reserve_address_range(r->size));
    r->host_base = reinterpret_cast<uintptr_t>(reserve_address_range(r->size));
    // Segments are MAP_SHARED: a forked child would write the parent's
    // device memory and hand out blocks the parent also uses. Like CUDA,
    // refuse device use in such children.
    SCAFFOLD_CHECK_STATUS(pthread_atfork(nullptr, nullptr, &mark_child_as_bad_fork));
    g_region.store(r, std::memory_order_release);
  });
  return *g_region.load(std::memory_order_acquire);
}

// ---- Blocks and segments ---------------------------------------------------
struct Segment {
  uint64_t offset; // within the device's slice of the region
  size_t size;
  bool small;
};

// A piece of a segment, either live (handed out) or free (in a pool).
// Neighbours in the same segment are linked so freeing can coalesce.
struct Block {
  uint64_t offset;
  size_t size;
  Segment* segment;
  Block* prev = nullptr;
  Block* next = nullptr;
  bool allocated = false;
};

// Free blocks ordered by (size, address): lower_bound is best fit, i.e. a
// free list per size class with the classes kept in order.
struct BySizeThenAddress {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->offset < b->offset;
  }
};
using FreePool = std::set<Block*, BySizeThenAddress>;

void free_device_memory(void* device_ptr);

// ---- One device's heap -----------------------------------------------------
class DeviceHeap {
 public:
  void init(c10::DeviceIndex index) {
    index_ = index;
    capacity_ = config().default_capacity;
    unused_ranges_.emplace(0, kDeviceAddressSpan);
  }

  c10::DataPtr allocate(size_t nbytes) {
    const c10::Device device = make_device(index_);
    TORCH_CHECK(
        !in_bad_fork(),
        "cannot use ",
        c10::get_privateuse1_backend(),
        " device memory in a process forked after the device was used "
        "(the memory would be shared with the parent); use the 'spawn' or "
        "'forkserver' multiprocessing start method");
    if (nbytes == 0) {
      // Nothing to map; a null data pointer is what PyTorch expects for
      // empty storages. Still carries the device.
      return c10::DataPtr(nullptr, nullptr, &free_device_memory, device);
    }
    const Region& r = region();
    std::lock_guard<std::mutex> lock(mutex_);
    if (nbytes > kDeviceAddressSpan) {
      raise_oom(nbytes); // also guards round_up against overflow
    }
    const size_t size = round_up(nbytes, kBlockGranularity);
    const bool small = size <= kSmallRequest;
    FreePool& pool = small ? small_free_ : large_free_;
    ++stats_.alloc_requests;

    Block* block = take_best_fit(pool, size);
    if (block == nullptr) {
      block = map_segment_for(nbytes, size, small);
    }
    split(block, size, pool);
    block->allocated = true;
    live_.emplace(block->offset, block);

    stats_.allocated_bytes += block->size;
    stats_.active_blocks += 1;
    stats_.peak_allocated_bytes =
        std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    mark_device_initialized(index_);

    void* ptr = reinterpret_cast<void*>(slice_base(r.device_base) + block->offset);
    // ctx == data keeps Allocator::raw_deleter()/raw_allocate usable.
    return c10::DataPtr(ptr, ptr, &free_device_memory, device);
  }

  void free(uint64_t offset) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(offset);
    if (it == live_.end()) {
      // Called from deleters, which must not throw. This is a bug (double
      // free or a foreign pointer); say so loudly but keep the process up.
      std::fprintf(
          stderr,
          "[%s runtime] warning: freeing unknown device pointer at offset "
          "0x%" PRIx64 " on device %d (double free?)\n",
          c10::get_privateuse1_backend().c_str(),
          offset,
          static_cast<int>(index_));
      return;
    }
    Block* block = it->second;
    live_.erase(it);
    block->allocated = false;
    stats_.allocated_bytes -= block->size;
    stats_.active_blocks -= 1;

    FreePool& pool = block->segment->small ? small_free_ : large_free_;
    // Coalesce with free neighbours. A block's size is its ordering key, so
    // a neighbour leaves the pool *before* it grows.
    if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
      pool.erase(prev);
      prev->size += block->size;
      unlink_next(prev, block);
      block = prev;
    }
    if (Block* next = block->next; next != nullptr && !next->allocated) {
      pool.erase(next);
      block->size += next->size;
      unlink_next(block, next);
    }
    pool.insert(block);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached_segments();
  }

  DeviceMemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceMemoryStats s = stats_;
    s.capacity_bytes = capacity_;
    return s;
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

  void set_capacity(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
    if (stats_.reserved_bytes > capacity_) {
      release_cached_segments();
    }
  }

  uint64_t capacity() {
    std::lock_guard<std::mutex> lock(mutex_);
    return capacity_;
  }

 private:
  uintptr_t slice_base(uintptr_t base) const {
    return base + static_cast<uint64_t>(index_) * kDeviceAddressSpan;
  }

  static Block* take_best_fit(FreePool& pool, size_t size) {
    Block key{0, size, nullptr};
    auto it = pool.lower_bound(&key);
    if (it == pool.end()) {
      return nullptr;
    }
    Block* block = *it;
    pool.erase(it);
    return block;
  }

  // Keeps the first `size` bytes of `block`, returns the rest to `pool`
  // when worth it. Large blocks are only split when the remainder is itself
  // a large allocation, so big segments don't shatter into small pieces
  // (same rule as the CUDA caching allocator).
  static void split(Block* block, size_t size, FreePool& pool) {
    const size_t remaining = block->size - size;
    const bool worth_it = block->segment->small ? remaining >= kBlockGranularity
                                                : remaining > kSmallRequest;
    if (!worth_it) {
      return;
    }
    auto* rest = new Block{block->offset + size, remaining, block->segment};
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) {
      block->next->prev = rest;
    }
    block->next = rest;
    block->size = size;
    pool.insert(rest);
  }

  // `keep` absorbed `gone`, its right neighbour.
  static void unlink_next(Block* keep, Block* gone) {
    keep->next = gone->next;
    if (gone->next != nullptr) {
      gone->next->prev = keep;
    }
    delete gone;
  }

  // Cache miss: map a new segment, freeing cached ones first if the
  // capacity would be exceeded, and raise OutOfMemoryError if that is not
  // enough. Returns a free block covering the whole new segment.
  Block* map_segment_for(size_t nbytes, size_t size, bool small) {
    const size_t exact = small ? kSmallSegment : round_up(size, kSegmentGranularity);
    const size_t preferred = small || size >= kOwnSegmentFrom ? exact : kLargeSegment;
    auto fits = [&](size_t segment_size) {
      return stats_.reserved_bytes + segment_size <= capacity_;
    };
    if (!fits(preferred)) {
      release_cached_segments();
    }
    // Near the capacity, fall back from a shared 20 MiB segment to one
    // sized for this request rather than failing.
    const size_t segment_size =
        fits(preferred) ? preferred : (fits(exact) ? exact : 0);
    if (segment_size == 0) {
      raise_oom(nbytes);
    }
    auto range = take_address_range(segment_size);
    if (!range) {
      release_cached_segments();
      range = take_address_range(segment_size);
      if (!range) {
        raise_oom(nbytes); // address span fragmented
      }
    }
    try {
      map_views(*range, segment_size);
    } catch (...) {
      return_address_range(*range, segment_size);
      throw;
    }
    auto* segment = new Segment{*range, segment_size, small};
    stats_.reserved_bytes += segment_size;
    stats_.segments += 1;
    stats_.segment_maps += 1;
    return new Block{*range, segment_size, segment};
  }

  // The only syscalls of the allocator: one memfd, mapped at the same
  // offset in the device view and in the host view.
  void map_views(uint64_t offset, size_t size) {
    const Region& r = region();
    void* device_at = reinterpret_cast<void*>(slice_base(r.device_base) + offset);
    void* host_at = reinterpret_cast<void*>(slice_base(r.host_base) + offset);
    const std::string name = device_string(index_);
    const int fd = SCAFFOLD_CHECK_RESULT(memfd_create(name.c_str(), MFD_CLOEXEC), -1);
    try {
      SCAFFOLD_CHECK_STATUS(ftruncate(fd, static_cast<off_t>(size)));
      const int device_prot = config().protect ? PROT_NONE : PROT_READ | PROT_WRITE;
      SCAFFOLD_CHECK_RESULT(
          mmap(device_at, size, device_prot, MAP_SHARED | MAP_FIXED, fd, 0),
          MAP_FAILED);
      SCAFFOLD_CHECK_RESULT(
          mmap(host_at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0),
          MAP_FAILED);
    } catch (...) {
      close(fd);
      unreserve_in_place(reinterpret_cast<uintptr_t>(device_at), size);
      unreserve_in_place(reinterpret_cast<uintptr_t>(host_at), size);
      throw;
    }
    // The mappings keep the pages alive; the descriptor is not needed.
    SCAFFOLD_CHECK_STATUS(close(fd));
  }

  // Unmaps every segment whose single block is free. Called on
  // empty_cache, before failing an allocation, and when capacity drops.
  void release_cached_segments() {
    const Region& r = region();
    for (FreePool* pool : {&small_free_, &large_free_}) {
      std::vector<Block*> whole;
      for (Block* block : *pool) {
        if (block->prev == nullptr && block->next == nullptr) {
          whole.push_back(block);
        }
      }
      for (Block* block : whole) {
        pool->erase(block);
        Segment* segment = block->segment;
        unreserve_in_place(slice_base(r.device_base) + segment->offset, segment->size);
        unreserve_in_place(slice_base(r.host_base) + segment->offset, segment->size);
        return_address_range(segment->offset, segment->size);
        stats_.reserved_bytes -= segment->size;
        stats_.segments -= 1;
        stats_.segment_unmaps += 1;
        delete segment;
        delete block;
      }
    }
  }

  // First fit over the unused parts of this device's address slice.
  std::optional<uint64_t> take_address_range(size_t size) {
    for (auto it = unused_ranges_.begin(); it != unused_ranges_.end(); ++it) {
      if (it->second >= size) {
        const uint64_t offset = it->first;
        const uint64_t rest = it->second - size;
        unused_ranges_.erase(it);
        if (rest > 0) {
          unused_ranges_.emplace(offset + size, rest);
        }
        return offset;
      }
    }
    return std::nullopt;
  }

  void return_address_range(uint64_t offset, uint64_t size) {
    auto it = unused_ranges_.emplace(offset, size).first;
    if (auto next = std::next(it);
        next != unused_ranges_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      unused_ranges_.erase(next);
    }
    if (it != unused_ranges_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        unused_ranges_.erase(it);
      }
    }
  }

  [[noreturn]] void raise_oom(size_t nbytes) {
    stats_.oom_count += 1;
    const std::string backend = c10::get_privateuse1_backend();
    TORCH_CHECK_WITH(
        OutOfMemoryError,
        false,
        backend,
        " out of memory on device ",
        device_string(index_),
        ": tried to allocate ",
        format_bytes(nbytes),
        "; allocated ",
        format_bytes(stats_.allocated_bytes),
        ", reserved ",
        format_bytes(stats_.reserved_bytes),
        ", capacity ",
        format_bytes(capacity_),
        ". Free tensors, or raise the limit with torch.",
        backend,
        ".set_memory_capacity() or SCAFFOLD_DEVICE_MEMORY_CAPACITY.");
  }

  std::mutex mutex_;
  c10::DeviceIndex index_ = 0;
  uint64_t capacity_ = 0;
  DeviceMemoryStats stats_;
  FreePool small_free_;
  FreePool large_free_;
  std::unordered_map<uint64_t, Block*> live_; // offset -> live block
  std::map<uint64_t, uint64_t> unused_ranges_; // offset -> length
};

DeviceHeap& heap(c10::DeviceIndex index) {
  // Leaked on purpose: tensors freed during interpreter shutdown still call
  // into the heap after static destructors would have run.
  static std::array<DeviceHeap, kMaxDevices>* heaps = [] {
    auto* h = new std::array<DeviceHeap, kMaxDevices>();
    for (c10::DeviceIndex i = 0; i < kMaxDevices; ++i) {
      (*h)[i].init(i);
    }
    return h;
  }();
  return (*heaps)[index];
}

void free_device_memory(void* device_ptr) {
  if (device_ptr == nullptr) {
    return;
  }
  const Region* r = g_region.load(std::memory_order_acquire);
  const c10::DeviceIndex index = device_of_address(device_ptr);
  if (r == nullptr || index < 0) {
    std::fprintf(
        stderr,
        "[%s runtime] warning: asked to free %p, which is not device memory\n",
        c10::get_privateuse1_backend().c_str(),
        device_ptr);
    return;
  }
  const uint64_t offset = reinterpret_cast<uintptr_t>(device_ptr) - r->device_base -
      static_cast<uint64_t>(index) * kDeviceAddressSpan;
  heap(index).free(offset);
}

class DeviceAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    return allocate_on_device(current_device(), nbytes);
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &free_device_memory;
  }

  // Device-to-device copy of whole allocations (Storage copies use it).
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) {
      return;
    }
    void* host_dest = translate_device_address(dest);
    const void* host_src = translate_device_address(src);
    TORCH_CHECK(
        host_dest != nullptr && host_src != nullptr,
        c10::get_privateuse1_backend(),
        " allocator copy_data: pointers are not device memory of this runtime");
    std::memmove(host_dest, host_src, count);
  }
};

} // namespace

c10::Allocator* device_allocator() {
  static DeviceAllocator* allocator = new DeviceAllocator();
  return allocator;
}

c10::DataPtr allocate_on_device(c10::DeviceIndex device, size_t nbytes) {
  check_device_index(device);
  return heap(device).allocate(nbytes);
}

DeviceMemoryStats memory_stats(c10::DeviceIndex device) {
  check_device_index(device);
  return heap(device).stats();
}

void reset_peak_memory_stats(c10::DeviceIndex device) {
  check_device_index(device);
  heap(device).reset_peak();
}

void empty_cache() {
  if (g_region.load(std::memory_order_acquire) == nullptr) {
    return; // nothing was ever allocated
  }
  for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
    heap(i).empty_cache();
  }
}

void set_memory_capacity(c10::DeviceIndex device, uint64_t bytes) {
  check_device_index(device);
  TORCH_CHECK_VALUE(
      bytes <= kDeviceAddressSpan,
      "memory capacity of ",
      device_string(device),
      " cannot exceed ",
      kDeviceAddressSpan,
      " bytes (the address space reserved per device); got ",
      bytes);
  heap(device).set_capacity(bytes);
}

uint64_t memory_capacity(c10::DeviceIndex device) {
  check_device_index(device);
  return heap(device).capacity();
}

bool in_bad_fork() noexcept {
  return g_bad_fork.load(std::memory_order_relaxed);
}

bool memory_protection_enabled() {
  return config().protect;
}

void* translate_device_address(const void* device_ptr) noexcept {
  const Region* r = g_region.load(std::memory_order_acquire);
  if (r == nullptr) {
    return nullptr;
  }
  // Unsigned wrap-around turns "below the base" into "too large" as well.
  const uint64_t offset = reinterpret_cast<uintptr_t>(device_ptr) - r->device_base;
  if (offset >= r->size) {
    return nullptr;
  }
  return reinterpret_cast<void*>(r->host_base + offset);
}

c10::DeviceIndex device_of_address(const void* device_ptr) noexcept {
  const Region* r = g_region.load(std::memory_order_acquire);
  if (r == nullptr) {
    return -1;
  }
  const uint64_t offset = reinterpret_cast<uintptr_t>(device_ptr) - r->device_base;
  if (offset >= r->size) {
    return -1;
  }
  return static_cast<c10::DeviceIndex>(offset / kDeviceAddressSpan);
}

} // namespace scaffold::runtime
