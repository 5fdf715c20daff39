// The simulated device's copy engine: the bytes of a copy or memset enqueued
// on a stream, moved by the stream's worker with the help of a few leaked
// helper threads when the range is large.
//
// Why: a device's DMA engines stream a large copy at full bandwidth, while a
// single host memcpy thread reaches only part of the memory bandwidth that
// the CPU's own `copy_` (parallel across cores) gets. With one thread, a 4M-
// element copy from pinned memory took 1.6x the CPU's time. A hardware team
// replaces this file with its SDK's DMA calls, or keeps it for host memory.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "simulated.h"

namespace scaffold::driver {
namespace {

// Below this a copy is one memmove: splitting costs more than it gains.
constexpr size_t kSplitFromBytes = size_t{1} << 20;
// The piece the worker and the helpers claim one at a time: many pieces per
// thread, so a helper that wakes late takes fewer of them instead of leaving
// a whole share of the copy for the end.
constexpr size_t kChunkBytes = size_t{256} << 10;
// Helpers beyond the calling worker; more than this rarely adds bandwidth.
constexpr unsigned kMaxHelpers = 7;

// One split copy (or set): chunks are claimed by index by the calling worker
// and the helpers alike, so a helper that is slow to wake costs nothing.
struct Job {
  char* dst = nullptr;
  const char* src = nullptr; // null: memset with `value`
  int value = 0;
  size_t size = 0;
  size_t chunk = 0;
  size_t chunks = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};

  // Runs chunks until none is left to claim.
  void work() {
    for (size_t index; (index = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      const size_t begin = index * chunk;
      const size_t length = std::min(chunk, size - begin);
      if (src != nullptr) {
        std::memcpy(dst + begin, src + begin, length);
      } else {
        std::memset(dst + begin, value, length);
      }
      done.fetch_add(1, std::memory_order_acq_rel);
    }
  }
};

class CopyHelpers {
 public:
  explicit CopyHelpers(unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
      std::thread([this] { serve(); }).detach(); // leaked with the pool: see helpers()
    }
    helpers_ = count;
  }

  unsigned size() const {
    return helpers_;
  }

  // Runs `job` with the helpers; false (nothing done) when another stream's
  // worker is using them, and the caller copies alone.
  bool run(Job& job) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) {
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    ready_.notify_all();
    job.work();
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done.load(std::memory_order_acquire) == job.chunks && active_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void serve() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return generation_ != seen && job_ != nullptr; });
      seen = generation_;
      Job* job = job_;
      ++active_;
      lock.unlock();
      job->work();
      lock.lock();
      // The job lives on the caller's stack: the caller returns only once no
      // helper is inside it.
      if (--active_ == 0) {
        finished_.notify_one();
      }
    }
  }

  unsigned helpers_ = 0;
  std::mutex busy_; // one split job at a time
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable finished_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  unsigned active_ = 0;
};

CopyHelpers& helpers() {
  // Leaked on purpose, like the default streams' workers: joining threads
  // from a static destructor at exit can deadlock.
  static auto* pool = new CopyHelpers(std::min(kMaxHelpers, std::max(1u, std::thread::hardware_concurrency()) - 1));
  return *pool;
}

bool overlaps(const void* a, const void* b, size_t size) {
  const auto x = reinterpret_cast<uintptr_t>(a);
  const auto y = reinterpret_cast<uintptr_t>(b);
  return x < y + size && y < x + size;
}

// Splits [dst, +size) into chunks for the helpers; false when it is not worth
// it (small, overlapping, one core) or they are busy.
bool run_split(Job& job) {
  if (job.size < kSplitFromBytes || (job.src != nullptr && overlaps(job.dst, job.src, job.size))) {
    return false;
  }
  CopyHelpers& pool = helpers();
  if (pool.size() == 0) {
    return false;
  }
  job.chunks = job.size / kChunkBytes;
  job.chunk = (job.size + job.chunks - 1) / job.chunks;
  return pool.run(job);
}

} // namespace

void copy_bytes(void* dst, const void* src, size_t size) {
  Job job;
  job.dst = static_cast<char*>(dst);
  job.src = static_cast<const char*>(src);
  job.size = size;
  if (!run_split(job)) {
    std::memmove(dst, src, size); // may overlap: device-to-device within one allocation
  }
}

void set_bytes(void* dst, int value, size_t size) {
  Job job;
  job.dst = static_cast<char*>(dst);
  job.value = value;
  job.size = size;
  if (!run_split(job)) {
    std::memset(dst, value, size);
  }
}

void fill_pattern(void* dst, const void* pattern, size_t pattern_size, size_t size) {
  auto* bytes = static_cast<const unsigned char*>(pattern);
  if (std::all_of(bytes, bytes + pattern_size, [&](unsigned char b) { return b == bytes[0]; })) {
    set_bytes(dst, bytes[0], size); // zeros, all-ones, ...: a memset
    return;
  }
  // The pattern once, then doubling copies of what is written: log2(size)
  // memcpy calls, each at memcpy's bandwidth.
  auto* out = static_cast<char*>(dst);
  std::memcpy(out, pattern, pattern_size);
  for (size_t written = pattern_size; written < size;) {
    const size_t chunk = std::min(written, size - written);
    std::memcpy(out + written, out, chunk);
    written += chunk;
  }
}

} // namespace scaffold::driver
