// What coverage recording keeps (coverage.h says what it is for): one
// record per op and path that reached the device, and the device-side timing
// of native ops that fills those records once the device has done the work.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

namespace scaffold::runtime {

// How an op that reached the device ran (the report's "path").
enum class OpPath { Native, Fallback, Composite, Custom, Other };

const char* path_name(OpPath path);

struct OpRecord {
  std::string name; // "aten::add.out"
  OpPath path = OpPath::Other;
  int64_t calls = 0;
  int64_t host_ns = 0;
  int64_t overhead_ns = 0;
  int64_t device_ns = 0;
  int64_t device_timed_calls = 0;
  std::vector<std::string> signatures; // distinct call signatures, the first ones seen
  // Whether more signatures are wanted: read without the lock on every call,
  // so that an op whose signatures are all kept costs no signature work.
  std::atomic<bool> wants_signatures{true};
};

class CoverageTable {
 public:
  // The record of (name, path), made on first use; records live as long as
  // the process (threads keep pointers to them), clear() only zeroes them.
  OpRecord* record(const std::string& name, OpPath path);
  // One call: its time on the host, the part of it that was overhead (the
  // fallback's host views or copies), its call signature (kept if new and
  // there is room; empty: none).
  void add_call(OpRecord* record, int64_t host_ns, int64_t overhead_ns, std::string signature);
  void add_device_time(OpRecord* record, int64_t device_ns);
  void configure(int64_t max_signatures);
  void clear();
  // {"device_timing": bool, "ops": [{"name", "path", "calls", "host_ns",
  //  "overhead_ns", "device_ns" (null unless every call was timed on the
  //  device), "signatures": [{"shapes", "dtypes", "arguments"}, ...]}, ...]}:
  // the ops that ran at least once, in no particular order.
  std::string json(bool device_timing);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, OpRecord*> index_;
  std::deque<OpRecord> records_; // a deque: records never move
  int64_t max_signatures_ = 8;
};

CoverageTable& coverage_records();

// Device time of native ops: a timing event on the op's stream before it and
// one after; the time between them is the work the op put on its stream.
// Resolved in batches once done (the events are kept for reuse), so that
// recording never waits for the device but at the end.
class DeviceTimings {
 public:
  bool enabled() const {
    return enabled_.load(std::memory_order_relaxed);
  }
  // A recorded timing event on `stream`, or null when the device cannot time
  // work (then timing turns off: native ops report host time).
  void* mark(const c10::Stream& stream) noexcept;
  // The op of `record` ran between `start` and `end` (both from mark()).
  void add(OpRecord* record, void* start, void* end, c10::DeviceIndex device) noexcept;
  void discard(void* start, c10::DeviceIndex device) noexcept;
  // Resolves every pending timing (waits for the work).
  void settle_all();

 private:
  struct Pending {
    OpRecord* record;
    void* start;
    void* end;
    c10::DeviceIndex device;
  };

  void settle_locked(bool wait);
  void* take_free(c10::DeviceIndex device) noexcept;
  void give_back(c10::DeviceIndex device, void* event) noexcept;

  std::atomic<bool> enabled_{true};
  std::mutex mutex_;
  std::deque<Pending> pending_;
  size_t since_settled_ = 0;
  std::mutex free_mutex_;
  std::unordered_map<c10::DeviceIndex, std::vector<void*>> free_;
};

DeviceTimings& device_timings();

} // namespace scaffold::runtime
