// The simulated driver: activity tracing. While tracing is on, each piece of
// stream work is stamped at enqueue with the enqueuing thread's correlation
// id, and the stream worker that runs it times it and keeps a record here;
// drvActivityFlush hands the records to the profiler.
#include <array>
#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

#include "simulated.h"

namespace scaffold::driver {

std::atomic<bool> g_activity_enabled{false};

namespace {

// Records kept between flushes, at most kMaxRecords (64 bytes each): a
// profile of a long run loses its newest records, counted, rather than
// exhausting host memory.
constexpr size_t kMaxRecords = size_t{1} << 21;

struct Activities {
  std::mutex mutex;
  std::vector<drvActivityRecord> records;
  uint64_t dropped = 0;
};

Activities& activities() {
  static auto* all = new Activities(); // leaked: stream workers use it at exit
  return *all;
}

std::array<std::atomic<uint64_t>, kMaxDevices>& busy_time() {
  static auto* all = new std::array<std::atomic<uint64_t>, kMaxDevices>();
  return *all;
}

thread_local std::vector<uint64_t> t_correlation_ids;

} // namespace

uint64_t current_correlation_id() noexcept {
  return t_correlation_ids.empty() ? 0 : t_correlation_ids.back();
}

uint64_t activity_clock_ns() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void keep_activity(const drvActivityRecord& record) noexcept {
  Activities& all = activities();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (all.records.size() >= kMaxRecords) {
    ++all.dropped;
    return;
  }
  try {
    all.records.push_back(record);
  } catch (...) { // out of host memory: lose the record, not the process
    ++all.dropped;
  }
}

void add_busy_time(int device, uint64_t ns) noexcept {
  busy_time()[device].fetch_add(ns, std::memory_order_relaxed);
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

drvError_t drvActivityEnable(int enabled) {
  if (drvError_t status = check_config(); status != drvSuccess) {
    return status;
  }
  g_activity_enabled.store(enabled != 0, std::memory_order_relaxed);
  return drvSuccess;
}

drvError_t drvActivityGetTimestamp(uint64_t* ns) {
  if (ns == nullptr) {
    return fail(drvErrorInvalidValue, "drvActivityGetTimestamp: null argument");
  }
  *ns = activity_clock_ns();
  return drvSuccess;
}

drvError_t drvActivityPushCorrelationId(uint64_t id) {
  try {
    t_correlation_ids.push_back(id);
  } catch (...) {
    return fail(drvErrorMemoryAllocation, "drvActivityPushCorrelationId: out of host memory");
  }
  return drvSuccess;
}

drvError_t drvActivityPopCorrelationId(void) {
  if (t_correlation_ids.empty()) {
    return fail(drvErrorInvalidValue, "drvActivityPopCorrelationId: no correlation id was pushed on this thread");
  }
  t_correlation_ids.pop_back();
  return drvSuccess;
}

drvError_t drvActivityFlush(drvActivityConsumer consume, void* user_data, uint64_t* dropped) {
  if (consume == nullptr) {
    return fail(drvErrorInvalidValue, "drvActivityFlush: null consumer");
  }
  std::vector<drvActivityRecord> records;
  uint64_t lost = 0;
  {
    Activities& all = activities();
    std::lock_guard<std::mutex> lock(all.mutex);
    records.swap(all.records);
    lost = std::exchange(all.dropped, 0);
  }
  if (!records.empty()) {
    consume(records.data(), records.size(), user_data);
  }
  if (dropped != nullptr) {
    *dropped = lost;
  }
  return drvSuccess;
}

drvError_t drvTestingDeviceBusyTime(int device, uint64_t* ns) {
  if (ns == nullptr) {
    return fail(drvErrorInvalidValue, "drvTestingDeviceBusyTime: null argument");
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  *ns = busy_time()[device].load(std::memory_order_relaxed);
  return drvSuccess;
}

} // extern "C"
