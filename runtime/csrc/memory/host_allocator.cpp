#include "host_allocator.h"

#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <c10/util/Exception.h>
#include <c10/util/llvmMathExtras.h>

#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

constexpr size_t kPageSize = 4096;
constexpr size_t kPowerOfTwoUpTo = size_t{16} << 20;
constexpr size_t kLargeGranularity = size_t{2} << 20;

size_t size_class(size_t nbytes) {
  if (nbytes <= kPageSize) {
    return kPageSize;
  }
  if (nbytes <= kPowerOfTwoUpTo) {
    return c10::llvm::PowerOf2Ceil(nbytes);
  }
  return (nbytes + kLargeGranularity - 1) / kLargeGranularity * kLargeGranularity;
}

void free_pinned(void* ptr);

class PinnedHostAllocator final : public at::HostAllocator {
 public:
  at::DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) {
      return at::DataPtr(nullptr, nullptr, &free_pinned, c10::Device(c10::kCPU));
    }
    const size_t size = size_class(nbytes);
    void* ptr = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      process_pending();
      auto cached = free_.find(size);
      if (cached != free_.end() && !cached->second.empty()) {
        ptr = cached->second.back();
        cached->second.pop_back();
      }
    }
    const bool fresh = ptr == nullptr;
    if (fresh) {
      SCAFFOLD_DRIVER_CHECK(drvHostAlloc(&ptr, size));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(reinterpret_cast<uintptr_t>(ptr), size);
    if (fresh) { // allocations/allocated_bytes count memory taken from the OS
      stats_.allocations.increase(1);
      stats_.allocated_bytes.increase(size);
      stats_.num_host_alloc += 1;
    }
    stats_.active_requests.increase(1);
    stats_.active_bytes.increase(size);
    return at::DataPtr(ptr, ptr, &free_pinned, c10::Device(c10::kCPU));
  }

  at::DeleterFnPtr raw_deleter() const override {
    return &free_pinned;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }

  void free(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    TORCH_INTERNAL_ASSERT(it != live_.end(), "freeing unknown pinned pointer");
    const size_t size = it->second;
    live_.erase(it);
    stats_.active_requests.decrease(1);
    stats_.active_bytes.decrease(size);
    auto used = used_on_.find(ptr);
    if (used != used_on_.end()) {
      // Copies enqueued on these streams may still read or write the block.
      Pending pending{ptr, size, {}};
      for (drvStream_t stream : used->second) {
        drvEvent_t event = nullptr;
        if (drvEventCreate(&event, DRV_EVENT_DISABLE_TIMING) == drvSuccess &&
            drvEventRecord(event, stream) == drvSuccess) {
          pending.events.push_back(event);
        } else { // cannot track it (a deleter must not throw): wait now
          (void)drvStreamSynchronize(stream);
          if (event != nullptr) {
            (void)drvEventDestroy(event);
          }
        }
      }
      used_on_.erase(used);
      pending_.push_back(std::move(pending));
      return;
    }
    free_[size].push_back(ptr);
  }

  bool contains(const void* ptr) {
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.upper_bound(address); // first block starting after ptr
    if (it == live_.begin()) {
      return false;
    }
    --it;
    return address < it->first + it->second;
  }

  // A non-blocking copy enqueued on `stream` uses the block at `ctx`: it is
  // not reused after being freed until that copy is done.
  bool record_event(void* /*ptr*/, void* ctx, c10::Stream stream) override {
    drvStream_t driver = driver_stream(stream);
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_.find(reinterpret_cast<uintptr_t>(ctx)) == live_.end()) {
      return false; // not one of our blocks
    }
    used_on_[ctx].insert(driver);
    return true;
  }

  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Pending& pending : pending_) { // wait for their copies, then cache
      for (drvEvent_t event : pending.events) {
        (void)drvEventSynchronize(event);
      }
    }
    process_pending();
    for (auto& [size, pointers] : free_) {
      for (void* p : pointers) {
        SCAFFOLD_DRIVER_CHECK(drvHostFree(p));
        stats_.allocations.decrease(1);
        stats_.allocated_bytes.decrease(size);
        stats_.num_host_free += 1;
      }
    }
    free_.clear();
  }

  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocations.reset_accumulated();
    stats_.allocated_bytes.reset_accumulated();
    stats_.active_requests.reset_accumulated();
    stats_.active_bytes.reset_accumulated();
  }

  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.allocations.reset_peak();
    stats_.allocated_bytes.reset_peak();
    stats_.active_requests.reset_peak();
    stats_.active_bytes.reset_peak();
  }

 private:
  struct Pending {
    void* ptr;
    size_t size;
    std::vector<drvEvent_t> events;
  };

  // Moves freed blocks whose copies have completed to the cache.
  void process_pending() {
    if (pending_.empty()) {
      return;
    }
    std::vector<Pending> still_pending;
    for (Pending& pending : pending_) {
      bool done = true;
      for (drvEvent_t event : pending.events) {
        if (drvEventQuery(event) == drvErrorNotReady) {
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
      free_[pending.size].push_back(pending.ptr);
    }
    pending_ = std::move(still_pending);
  }

  std::mutex mutex_;
  std::unordered_map<void*, std::unordered_set<drvStream_t>> used_on_; // live blocks only
  std::vector<Pending> pending_; // freed, waiting for copies
  std::map<uintptr_t, size_t> live_; // ordered: is_pinned takes interior pointers
  std::unordered_map<size_t, std::vector<void*>> free_; // size class -> cached
  at::HostStats stats_;
};

PinnedHostAllocator& instance() {
  static auto* allocator = new PinnedHostAllocator(); // leaked, see allocator.cpp
  return *allocator;
}

void free_pinned(void* ptr) {
  if (ptr != nullptr) {
    instance().free(ptr);
  }
}

} // namespace

at::HostAllocator* pinned_host_allocator() {
  return &instance();
}

bool is_pinned_pointer(const void* ptr) {
  return ptr != nullptr && instance().contains(ptr);
}

} // namespace scaffold::runtime
