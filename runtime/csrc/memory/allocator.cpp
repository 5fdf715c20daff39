#include "allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "capture.h"
#include "device.h"
#include "device_blocks.h"
#include "env.h"
#include "memory_history.h"
#include "profiler.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// ---- Size policy (see allocator.h; block sizes in device_blocks.h) ----------
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

// Default per-device capacity: SCAFFOLD_DEVICE_MEMORY_CAPACITY, else what
// the driver says the device holds.
uint64_t default_capacity(c10::DeviceIndex device) {
  drvDeviceProperties props{};
  SCAFFOLD_DRIVER_CHECK(drvGetDeviceProperties(&props, device));
  const uint64_t total = std::min<uint64_t>(props.total_memory, kMaxDeviceCapacity);
  const uint64_t capacity = env::get_bytes("SCAFFOLD_DEVICE_MEMORY_CAPACITY", total);
  TORCH_CHECK(
      capacity <= kMaxDeviceCapacity,
      "SCAFFOLD_DEVICE_MEMORY_CAPACITY=",
      capacity,
      " exceeds the per-device maximum of ",
      kMaxDeviceCapacity,
      " bytes");
  return capacity;
}

// A freed block and the events, one per other stream it was used on, that
// must complete before it is reused.
struct PendingFree {
  Block* block;
  std::vector<drvEvent_t> events;
};

void free_device_memory(void* device_ptr);

// A private pool's blocks are filed under a key in place of a stream, one no
// stream can have (the top of the address space), so that DeviceBlocks
// keeps them apart from every stream's and from other pools'.
drvStream_t pool_key(uint64_t serial) {
  return reinterpret_cast<drvStream_t>(~uintptr_t{0} - serial);
}
bool is_pool_key(drvStream_t stream) {
  return reinterpret_cast<uintptr_t>(stream) > ~uintptr_t{0} - (uintptr_t{1} << 32);
}

struct PrivatePool {
  c10::MempoolId_t id;
  drvStream_t key;
  int holders = 0; // graphs using it (release_pool)
};

std::atomic<uint64_t> g_next_pool_id{1};

// ---- One device's heap -----------------------------------------------------
class DeviceHeap {
 public:
  void init(c10::DeviceIndex index) {
    index_ = index;
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
    drvStream_t stream = current_driver_stream(index_);
    // A stream that joined a capture allocates from the pool of the stream
    // the capture began on.
    const drvStream_t capture_origin_stream = C10_UNLIKELY(capture_underway()) ? capture_origin(stream) : stream;
    // Stacks are gathered before the lock: the Python part takes the GIL.
    std::shared_ptr<c10::GatheredContext> stack;
    if (C10_UNLIKELY(memory_history_enabled())) {
      stack = gather_allocation_stack();
    }
    void* ptr = nullptr;
    size_t block_size = 0;
    uint64_t allocated = 0;
    uint64_t reserved = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ensure_capacity_known();
      if (nbytes > kMaxDeviceCapacity) {
        raise_oom(nbytes, /*small=*/false, stream); // also guards round_up against overflow
      }
      if (C10_UNLIKELY(!routes_.empty())) {
        stream = routed(capture_origin_stream, stream);
      }
      const size_t size = round_up(nbytes, kBlockGranularity);
      const bool small = size <= kSmallRequest;
      ++stats_.alloc_requests;
      process_pending_frees(/*wait=*/false);

      Block* block = blocks_.take(size, small, stream);
      if (block == nullptr) {
        block = map_segment_for(nbytes, size, small, stream, stack);
      }
      block->requested = nbytes;

      stats_.allocated_bytes += block->size;
      stats_.allocated_bytes_total += block->size;
      stats_.requested_bytes += nbytes;
      stats_.requested_bytes_total += nbytes;
      stats_.active_blocks += 1;
      stats_.peak_allocated_bytes =
          std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
      stats_.requested_bytes_peak = std::max(stats_.requested_bytes_peak, stats_.requested_bytes);
      stats_.active_blocks_peak = std::max(stats_.active_blocks_peak, stats_.active_blocks);
      mark_device_initialized(index_);
      if (C10_UNLIKELY(stack != nullptr || memory_history_enabled())) {
        record_trace(index_, TraceEntry{TraceAction::Alloc, block->address, block->size, stream, 0, 0, stack});
        block->stack = std::move(stack);
      }
      ptr = reinterpret_cast<void*>(block->address);
      block_size = block->size;
      allocated = stats_.allocated_bytes;
      reserved = stats_.reserved_bytes;
    }
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
      c10::reportMemoryUsageToProfiler(
          ptr, static_cast<int64_t>(block_size), allocated, reserved, device);
    }
    // ctx == data keeps Allocator::raw_deleter()/raw_allocate usable.
    return c10::DataPtr(ptr, ptr, &free_device_memory, device);
  }

  // Called from deleters: never throws.
  void free(uintptr_t address) noexcept {
    std::shared_ptr<c10::GatheredContext> stack;
    if (C10_UNLIKELY(memory_history_enabled())) {
      try {
        stack = gather_free_stack();
      } catch (...) {
      }
    }
    size_t freed = 0;
    uint64_t allocated = 0;
    uint64_t reserved = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      freed = release_block(address, stack);
      allocated = stats_.allocated_bytes;
      reserved = stats_.reserved_bytes;
    }
    if (C10_UNLIKELY(freed > 0 && c10::memoryProfilingEnabled())) {
      c10::reportMemoryUsageToProfiler(
          reinterpret_cast<void*>(address), -static_cast<int64_t>(freed), allocated, reserved,
          make_device(index_));
    }
  }

  // The block at `address` is no longer used by its tensor: parked, pending
  // until other streams pass the free, or back in its pool. Returns its
  // size (0 for an unknown address). Called with mutex_ held.
  size_t release_block(uintptr_t address, std::shared_ptr<c10::GatheredContext>& stack) noexcept {
    Block* block = blocks_.live(address);
    if (block == nullptr) {
      // This is a bug (double free or a foreign pointer); say so loudly
      // but keep the process up.
      std::fprintf(
          stderr,
          "[%s runtime] warning: freeing unknown device pointer 0x%" PRIxPTR
          " on device %d (double free?)\n",
          c10::get_privateuse1_backend().c_str(),
          address,
          static_cast<int>(index_));
      return 0;
    }
    const size_t size = block->size; // release may merge the block away
    stats_.allocated_bytes -= block->size;
    stats_.freed_bytes_total += block->size;
    stats_.requested_bytes -= block->requested;
    stats_.requested_freed_total += block->requested;
    stats_.active_blocks -= 1;
    block->requested = 0;
    block->stack = nullptr;
    if (C10_UNLIKELY(memory_history_enabled())) {
      trace_free(TraceAction::FreeRequested, *block, stack);
      if (block->used_on.empty()) {
        trace_free(TraceAction::FreeCompleted, *block, stack);
      }
    }
    if (block->used_on.empty()) {
      blocks_.release(block);
      return size;
    }
    // Work already enqueued on other streams may still read or write the
    // block: reuse waits for it.
    blocks_.retire(block);
    PendingFree pending{block, {}};
    for (drvStream_t stream : block->used_on) {
      drvEvent_t event = nullptr;
      if (drvEventCreate(&event, DRV_EVENT_DISABLE_TIMING) != drvSuccess ||
          drvEventRecord(event, stream) != drvSuccess) {
        // Cannot track it (a deleter must not throw): wait instead.
        (void)drvStreamSynchronize(stream);
        if (event != nullptr) {
          (void)drvEventDestroy(event);
        }
        continue;
      }
      pending.events.push_back(event);
    }
    block->used_on.clear();
    if (!pending.events.empty()) {
      pending_.push_back(std::move(pending));
      stats_.pending_free_blocks += 1;
      return size;
    }
    blocks_.return_to_pool(block);
    return size;
  }

  void trace_free(TraceAction action, const Block& block, const std::shared_ptr<c10::GatheredContext>& stack) noexcept {
    try {
      record_trace(index_, TraceEntry{action, block.address, block.size, block.segment->stream, 0, 0, stack});
    } catch (...) { // the history misses an entry rather than the free failing
    }
  }

  void record_stream(uintptr_t address, drvStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    Block* block = blocks_.live(address);
    TORCH_CHECK(
        block != nullptr,
        "record_stream: the tensor's storage is not a live allocation of the ",
        c10::get_privateuse1_backend(),
        " allocator on ",
        device_string(index_));
    // A private pool's blocks are reused only by its graphs' captures, in
    // the captured order: other streams' work needs no tracking there.
    if (stream != block->segment->stream && !is_pool_key(block->segment->stream)) {
      block->used_on.insert(stream);
    }
  }

  void begin_allocate_to_pool(c10::MempoolId_t id, drvStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    PrivatePool* pool = find_pool(id);
    if (pool == nullptr) {
      pools_.push_back(PrivatePool{id, pool_key(next_pool_key_++), 0});
      pool = &pools_.back();
    }
    pool->holders += 1;
    routes_.emplace_back(stream, pool->key);
  }

  void end_allocate_to_pool(drvStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(routes_, [&](const auto& route) { return route.first == stream; });
  }

  void release_pool(c10::MempoolId_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    PrivatePool* pool = find_pool(id);
    if (pool == nullptr || --pool->holders > 0) {
      return;
    }
    const drvStream_t key = pool->key;
    std::erase_if(pools_, [&](const PrivatePool& p) { return p.id == id; });
    release_cached_segments(key);
  }

  uint64_t pool_reserved_bytes(c10::MempoolId_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    const PrivatePool* pool = find_pool(id);
    uint64_t bytes = 0;
    for (const auto& [base, segment] : blocks_.segments()) {
      if (pool != nullptr && segment->stream == pool->key) {
        bytes += segment->size;
      }
    }
    return bytes;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    process_pending_frees(/*wait=*/true);
    release_cached_segments();
  }

  DeviceMemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    ensure_capacity_known();
    DeviceMemoryStats s = stats_;
    s.capacity_bytes = capacity_;
    return s;
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
    stats_.requested_bytes_peak = stats_.requested_bytes;
    stats_.reserved_bytes_peak = stats_.reserved_bytes;
    stats_.active_blocks_peak = stats_.active_blocks;
    stats_.segments_peak = stats_.segments;
  }

  void reset_accumulated() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.alloc_requests = 0;
    stats_.segment_maps = 0;
    stats_.segment_unmaps = 0;
    stats_.oom_count = 0;
    stats_.allocated_bytes_total = 0;
    stats_.freed_bytes_total = 0;
    stats_.requested_bytes_total = 0;
    stats_.requested_freed_total = 0;
  }

  void set_capacity(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = bytes;
    capacity_known_ = true;
    if (stats_.reserved_bytes > capacity_) {
      process_pending_frees(/*wait=*/true);
      release_cached_segments();
    }
  }

  uint64_t capacity() {
    std::lock_guard<std::mutex> lock(mutex_);
    ensure_capacity_known();
    return capacity_;
  }

  std::vector<SegmentSnapshot> snapshot(bool mark) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unordered_set<const Block*> awaiting_free;
    for (const PendingFree& pending : pending_) {
      awaiting_free.insert(pending.block);
    }
    std::vector<SegmentSnapshot> segments;
    const std::map<uintptr_t, Segment*>& mapped = blocks_.segments();
    segments.reserve(mapped.size());
    for (const auto& [base, segment] : mapped) {
      SegmentSnapshot& out = segments.emplace_back();
      out.device = index_;
      out.address = segment->base;
      out.total_size = segment->size;
      if (is_pool_key(segment->stream)) {
        for (const PrivatePool& pool : pools_) {
          if (pool.key == segment->stream) {
            out.pool = pool.id;
          }
        }
      } else {
        out.stream = segment->stream;
      }
      out.small = segment->small;
      out.stack = segment->stack;
      for (const Block* block = segment->head; block != nullptr; block = block->next) {
        BlockSnapshot& b = out.blocks.emplace_back();
        b.address = block->address;
        b.size = block->size;
        if (awaiting_free.count(block) > 0) {
          b.state = BlockState::ActiveAwaitingFree;
        } else if (block->allocated && !block->parked) {
          b.state = BlockState::ActiveAllocated;
          b.requested_size = block->requested;
          b.stack = block->stack;
        } else {
          b.state = BlockState::Inactive; // free, or parked for reuse
        }
      }
    }
    if (mark && C10_UNLIKELY(memory_history_enabled())) {
      record_trace(index_, TraceEntry{TraceAction::Snapshot, 0, 0, nullptr, 0, 0, nullptr});
    }
    return segments;
  }

 private:
  // Called with mutex_ held: the pool key of `captured`'s allocations, or
  // `unrouted` when they go to no pool.
  drvStream_t routed(drvStream_t captured, drvStream_t unrouted) const {
    for (const auto& [route, key] : routes_) {
      if (route == captured) {
        return key;
      }
    }
    return unrouted;
  }

  PrivatePool* find_pool(c10::MempoolId_t id) {
    for (PrivatePool& pool : pools_) {
      if (pool.id == id) {
        return &pool;
      }
    }
    return nullptr;
  }

  void ensure_capacity_known() {
    if (!capacity_known_) {
      capacity_ = default_capacity(index_);
      capacity_known_ = true;
    }
  }

  // Returns pending blocks whose events have completed to their pools
  // (every pending block when `wait`, after waiting for its events).
  void process_pending_frees(bool wait) {
    if (pending_.empty()) {
      return;
    }
    std::vector<PendingFree> still_pending;
    for (PendingFree& pending : pending_) {
      bool done = true;
      for (drvEvent_t event : pending.events) {
        if (wait) {
          (void)drvEventSynchronize(event);
        } else if (drvEventQuery(event) == drvErrorNotReady) {
          done = false;
          break;
        }
      }
      if (!done) {
        still_pending.push_back(std::move(pending));
        continue;
      }
      for (drvEvent_t event : pending.events) {
        (void)drvEventDestroy(event);
      }
      stats_.pending_free_blocks -= 1;
      if (C10_UNLIKELY(memory_history_enabled())) {
        trace_free(TraceAction::FreeCompleted, *pending.block, nullptr);
      }
      blocks_.return_to_pool(pending.block);
    }
    pending_ = std::move(still_pending);
  }

  // Cache miss: allocate a new segment from the driver, freeing cached ones
  // first if the capacity would be exceeded, and raise OutOfMemoryError if
  // that is not enough. Returns the segment's first block, cut to `size` and
  // live.
  Block* map_segment_for(
      size_t nbytes,
      size_t size,
      bool small,
      drvStream_t stream,
      const std::shared_ptr<c10::GatheredContext>& stack) {
    const size_t exact = small ? kSmallSegment : round_up(size, kSegmentGranularity);
    const size_t preferred = small || size >= kOwnSegmentFrom ? exact : kLargeSegment;
    auto fits = [&](size_t segment_size) {
      return stats_.reserved_bytes + segment_size <= capacity_;
    };
    if (!fits(preferred)) {
      process_pending_frees(/*wait=*/true);
      release_cached_segments();
    }
    // Near the capacity, fall back from a shared 20 MiB segment to one
    // sized for this request rather than failing.
    const size_t segment_size =
        fits(preferred) ? preferred : (fits(exact) ? exact : 0);
    if (segment_size == 0) {
      raise_oom(nbytes, small, stream);
    }
    void* base = driver_malloc(segment_size);
    if (base == nullptr) {
      release_cached_segments();
      base = driver_malloc(segment_size);
      if (base == nullptr) {
        raise_oom(nbytes, small, stream, /*driver_refused=*/true); // out of memory or address space
      }
    }
    auto* segment = new Segment{reinterpret_cast<uintptr_t>(base), segment_size, small, stream};
    segment->stack = stack;
    if (C10_UNLIKELY(memory_history_enabled())) {
      record_trace(index_, TraceEntry{TraceAction::SegmentAlloc, segment->base, segment_size, stream, 0, 0, stack});
    }
    stats_.reserved_bytes += segment_size;
    stats_.reserved_bytes_peak = std::max(stats_.reserved_bytes_peak, stats_.reserved_bytes);
    stats_.segments += 1;
    stats_.segments_peak = std::max(stats_.segments_peak, stats_.segments);
    stats_.segment_maps += 1;
    return blocks_.take_from_new_segment(segment, size);
  }

  // drvMalloc on this heap's device; nullptr when the driver is out of
  // memory, an error for anything else.
  void* driver_malloc(size_t size) {
    int previous = 0;
    SCAFFOLD_DRIVER_CHECK(drvGetDevice(&previous));
    SCAFFOLD_DRIVER_CHECK(drvSetDevice(index_));
    void* base = nullptr;
    const drvError_t status = drvMalloc(&base, size);
    (void)drvSetDevice(previous);
    if (status == drvErrorMemoryAllocation) {
      return nullptr;
    }
    SCAFFOLD_DRIVER_CHECK(status);
    return base;
  }

  // Gives every segment whose single block is free back to the driver.
  // Called on empty_cache, before failing an allocation, and when capacity
  // drops.
  void release_cached_segments(drvStream_t only = nullptr) {
    // A pool graphs still hold keeps its memory: their replays write it.
    auto releasable = [&](drvStream_t stream) {
      if (only != nullptr) {
        return stream == only;
      }
      return std::none_of(pools_.begin(), pools_.end(), [&](const PrivatePool& pool) { return pool.key == stream; });
    };
    for (const std::unique_ptr<Segment>& segment : blocks_.take_unused_segments(releasable)) {
      SCAFFOLD_DRIVER_CHECK(drvFree(reinterpret_cast<void*>(segment->base)));
      if (C10_UNLIKELY(memory_history_enabled())) {
        record_trace(
            index_, TraceEntry{TraceAction::SegmentFree, segment->base, segment->size, segment->stream, 0, 0, nullptr});
      }
      stats_.reserved_bytes -= segment->size;
      stats_.segments -= 1;
      stats_.segment_unmaps += 1;
    }
  }

  // Out of memory: says what the allocator holds and why it could not make
  // room -- the cache was released first -- and how to see more.
  [[noreturn]] void raise_oom(size_t nbytes, bool small, drvStream_t stream, bool driver_refused = false) {
    stats_.oom_count += 1;
    const uint64_t free_to_map = capacity_ > stats_.reserved_bytes ? capacity_ - stats_.reserved_bytes : 0;
    if (C10_UNLIKELY(memory_history_enabled())) {
      record_trace(index_, TraceEntry{TraceAction::Oom, 0, nbytes, stream, 0, free_to_map, nullptr});
    }
    if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
      c10::reportOutOfMemoryToProfiler(
          static_cast<int64_t>(nbytes), stats_.allocated_bytes, stats_.reserved_bytes, make_device(index_));
    }
    const uint64_t cached = stats_.reserved_bytes - stats_.allocated_bytes;
    const uint64_t largest_free = blocks_.largest_free(small, stream); // what this request could have used
    const std::string backend = c10::get_privateuse1_backend();
    std::ostringstream why;
    if (driver_refused) {
      why << "The driver refused to map more memory (the host is out of memory or address space).";
    } else if (stats_.reserved_bytes > capacity_) {
      why << "The capacity is below what the allocator already holds (it was lowered after the memory was "
          << "mapped): its cache was released, but the " << stats_.segments
          << " segment(s) left each hold live tensors, so they cannot be given back.";
    } else {
      why << "A new " << (small ? "small-pool segment (2 MiB)" : "segment") << " would exceed the capacity.";
    }
    if (cached > 0) {
      why << " Of the reserved memory, " << format_bytes(cached)
          << " is free but lies inside segments that hold live tensors (fragmentation); the largest free piece "
          << "this request could use (" << (small ? "small" : "large") << " pool, its stream) is "
          << format_bytes(largest_free) << ".";
    }
    TORCH_CHECK_WITH(
        OutOfMemoryError,
        false,
        backend,
        " out of memory on device ",
        device_string(index_),
        ": tried to allocate ",
        format_bytes(nbytes),
        "; capacity ",
        format_bytes(capacity_),
        ", reserved ",
        format_bytes(stats_.reserved_bytes),
        " in ",
        stats_.segments,
        " segment(s), allocated to tensors ",
        format_bytes(stats_.allocated_bytes),
        ". ",
        why.str(),
        " Free tensors, or raise the limit with torch.",
        backend,
        ".set_memory_capacity() or SCAFFOLD_DEVICE_MEMORY_CAPACITY. A memory snapshot shows each segment, "
        "the tensors in it and the code that allocated them: call torch.",
        backend,
        ".memory._record_memory_history() before the run and torch.",
        backend,
        ".memory._dump_snapshot(\"snapshot.pickle\") after the error, then open the file at "
        "https://pytorch.org/memory_viz (torch.",
        backend,
        ".memory_summary() prints the statistics).");
  }

  std::mutex mutex_;
  c10::DeviceIndex index_ = 0;
  uint64_t capacity_ = 0;
  bool capacity_known_ = false; // asked of the driver on first use
  DeviceMemoryStats stats_;
  DeviceBlocks blocks_; // segments and blocks: live, free, parked
  std::vector<PendingFree> pending_;
  std::vector<PrivatePool> pools_; // held by graphs
  std::vector<std::pair<drvStream_t, drvStream_t>> routes_; // captured stream -> its pool's key
  uint64_t next_pool_key_ = 0;
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
  int device = -1;
  if (drvPointerGetDevice(&device, device_ptr) != drvSuccess || device < 0 ||
      device >= kMaxDevices) {
    std::fprintf(
        stderr,
        "[%s runtime] warning: asked to free %p, which is not device memory\n",
        c10::get_privateuse1_backend().c_str(),
        device_ptr);
    return;
  }
  heap(static_cast<c10::DeviceIndex>(device)).free(reinterpret_cast<uintptr_t>(device_ptr));
}

// c10::CachingDeviceAllocator's statistics from ours (the "all pools"
// aggregate; this allocator keeps no per-pool breakdown).
c10::CachingDeviceAllocator::DeviceStats to_device_stats(const DeviceMemoryStats& s) {
  using c10::CachingDeviceAllocator::StatType;
  c10::CachingDeviceAllocator::DeviceStats out;
  const auto all = static_cast<size_t>(StatType::AGGREGATE);
  auto set = [&](c10::CachingDeviceAllocator::StatArray& stat, uint64_t current, uint64_t peak,
                 uint64_t allocated, uint64_t freed) {
    stat[all].current = static_cast<int64_t>(current);
    stat[all].peak = static_cast<int64_t>(peak);
    stat[all].allocated = static_cast<int64_t>(allocated);
    stat[all].freed = static_cast<int64_t>(freed);
  };
  set(out.allocated_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.allocated_bytes_total, s.freed_bytes_total);
  set(out.active_bytes, s.allocated_bytes, s.peak_allocated_bytes, s.allocated_bytes_total, s.freed_bytes_total);
  set(out.requested_bytes, s.requested_bytes, s.requested_bytes_peak, s.requested_bytes_total, s.requested_freed_total);
  set(out.reserved_bytes, s.reserved_bytes, s.reserved_bytes_peak, s.segment_maps, s.segment_unmaps);
  set(out.allocation, s.active_blocks, s.active_blocks_peak, s.alloc_requests, s.alloc_requests - s.active_blocks);
  set(out.active, s.active_blocks, s.active_blocks_peak, s.alloc_requests, s.alloc_requests - s.active_blocks);
  set(out.segment, s.segments, s.segments_peak, s.segment_maps, s.segment_unmaps);
  out.num_ooms = static_cast<int64_t>(s.oom_count);
  out.num_device_alloc = static_cast<int64_t>(s.segment_maps);
  out.num_device_free = static_cast<int64_t>(s.segment_unmaps);
  return out;
}

class CachingAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    return allocate_on_device(current_device(), nbytes);
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &free_device_memory;
  }

  // Device-to-device copy of whole allocations (Storage copies use it):
  // ordered on the current stream, finished when this returns.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) {
      return;
    }
    int device = -1;
    SCAFFOLD_DRIVER_CHECK(drvPointerGetDevice(&device, dest));
    drvStream_t stream = current_driver_stream(static_cast<c10::DeviceIndex>(device));
    const DeviceActivityScope activity("copy_data", static_cast<c10::DeviceIndex>(device), "drvMemcpyAsync");
    SCAFFOLD_DRIVER_CHECK(drvMemcpyAsync(dest, src, count, drvMemcpyDeviceToDevice, stream));
    SCAFFOLD_DRIVER_CHECK(drvStreamSynchronize(stream));
  }

  bool initialized() override {
    return true;
  }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override {
    runtime::empty_cache();
  }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    runtime::record_stream(ptr, stream);
  }

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    return to_device_stats(memory_stats(device));
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
    heap(device).reset_accumulated();
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    reset_peak_memory_stats(device);
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    const DeviceMemoryStats s = memory_stats(device);
    const uint64_t free = s.capacity_bytes > s.reserved_bytes ? s.capacity_bytes - s.reserved_bytes : 0;
    return {static_cast<size_t>(free), static_cast<size_t>(s.capacity_bytes)};
  }
};

} // namespace

c10::DeviceAllocator* device_allocator() {
  static CachingAllocator* allocator = new CachingAllocator();
  return allocator;
}

c10::DataPtr allocate_on_device(c10::DeviceIndex device, size_t nbytes) {
  check_device_index(device);
  return heap(device).allocate(nbytes);
}

void record_stream(const c10::DataPtr& data, const c10::Stream& stream) {
  if (data.get() == nullptr) {
    return; // empty storage: nothing to protect
  }
  drvStream_t driver = driver_stream(stream);
  int device = -1;
  SCAFFOLD_DRIVER_CHECK(drvPointerGetDevice(&device, data.get()));
  // A view's DataPtr is the storage's: its data is the allocation start.
  heap(static_cast<c10::DeviceIndex>(device)).record_stream(reinterpret_cast<uintptr_t>(data.get()), driver);
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
  for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
    // Giving memory back to the driver synchronises with the device (as
    // cudaFree does).
    refuse_if_device_captured(i, "releases cached memory (empty_cache())");
    heap(i).empty_cache();
  }
}

c10::MempoolId_t new_pool_id(bool handle) {
  const auto serial = static_cast<c10::CaptureId_t>(g_next_pool_id.fetch_add(1));
  return handle ? c10::MempoolId_t{0, serial} : c10::MempoolId_t{serial, 0};
}

void begin_allocate_to_pool(c10::DeviceIndex device, c10::MempoolId_t pool, drvStream_t stream) {
  check_device_index(device);
  heap(device).begin_allocate_to_pool(pool, stream);
}

void end_allocate_to_pool(c10::DeviceIndex device, drvStream_t stream) {
  check_device_index(device);
  heap(device).end_allocate_to_pool(stream);
}

void release_pool(c10::DeviceIndex device, c10::MempoolId_t pool) {
  check_device_index(device);
  heap(device).release_pool(pool);
}

uint64_t pool_reserved_bytes(c10::DeviceIndex device, c10::MempoolId_t pool) {
  check_device_index(device);
  return heap(device).pool_reserved_bytes(pool);
}

void set_memory_capacity(c10::DeviceIndex device, uint64_t bytes) {
  check_device_index(device);
  TORCH_CHECK_VALUE(
      bytes <= kMaxDeviceCapacity,
      "memory capacity of ",
      device_string(device),
      " cannot exceed ",
      kMaxDeviceCapacity,
      " bytes (the address space reserved per device); got ",
      bytes);
  heap(device).set_capacity(bytes);
}

uint64_t memory_capacity(c10::DeviceIndex device) {
  check_device_index(device);
  return heap(device).capacity();
}

std::vector<SegmentSnapshot> memory_snapshot(c10::DeviceIndex device, bool mark) {
  check_device_index(device);
  return heap(device).snapshot(mark);
}

bool in_bad_fork() noexcept {
  int forked = 0;
  return drvInForkedChild(&forked) == drvSuccess && forked != 0;
}

bool memory_protection_enabled() {
  int enabled = 0;
  SCAFFOLD_DRIVER_CHECK(drvMemoryProtectionEnabled(&enabled));
  return enabled != 0;
}

bool device_memory_is_host_addressable() noexcept {
  static const bool addressable = [] {
    int value = 0;
    // A driver that cannot answer is taken at its word as little as
    // possible: copies work on every device.
    return drvDeviceGetAttribute(&value, drvDevAttrHostAddressableMemory, 0) == drvSuccess && value != 0;
  }();
  return addressable;
}

} // namespace scaffold::runtime
