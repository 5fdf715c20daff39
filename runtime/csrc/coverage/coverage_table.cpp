#include "coverage_table.h"

#include "op_signature.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// Resolve the pending timings every this many ops, and wait for the oldest
// beyond this many (host memory stays bounded on a long run).
constexpr size_t kSettleEvery = 256;
constexpr size_t kMaxPending = 16384;
constexpr size_t kMaxFreeEventsPerDevice = 1024;

} // namespace

const char* path_name(OpPath path) {
  switch (path) {
    case OpPath::Native: return "native";
    case OpPath::Fallback: return "fallback";
    case OpPath::Composite: return "composite";
    case OpPath::Custom: return "custom";
    case OpPath::Other: return "other";
  }
  return "other";
}

// ---- CoverageTable ---------------------------------------------------------------

OpRecord* CoverageTable::record(const std::string& name, OpPath path) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string key = std::string(1, static_cast<char>('0' + static_cast<int>(path))) + name;
  auto found = index_.find(key);
  if (found != index_.end()) {
    return found->second;
  }
  OpRecord& record = records_.emplace_back();
  record.name = name;
  record.path = path;
  record.wants_signatures.store(max_signatures_ > 0, std::memory_order_relaxed);
  index_.emplace(std::move(key), &record);
  return &record;
}

void CoverageTable::add_call(OpRecord* record, int64_t host_ns, int64_t overhead_ns, std::string signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++record->calls;
  record->host_ns += host_ns;
  record->overhead_ns += overhead_ns;
  if (signature.empty() || signature.size() > kMaxSignatureBytes ||
      static_cast<int64_t>(record->signatures.size()) >= max_signatures_) {
    return;
  }
  for (const std::string& kept : record->signatures) {
    if (kept == signature) {
      return;
    }
  }
  record->signatures.push_back(std::move(signature));
  if (static_cast<int64_t>(record->signatures.size()) >= max_signatures_) {
    record->wants_signatures.store(false, std::memory_order_relaxed);
  }
}

void CoverageTable::add_device_time(OpRecord* record, int64_t device_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  record->device_ns += device_ns;
  ++record->device_timed_calls;
}

void CoverageTable::configure(int64_t max_signatures) {
  std::lock_guard<std::mutex> lock(mutex_);
  max_signatures_ = max_signatures;
  for (OpRecord& record : records_) {
    record.wants_signatures.store(
        static_cast<int64_t>(record.signatures.size()) < max_signatures_, std::memory_order_relaxed);
  }
}

void CoverageTable::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (OpRecord& record : records_) {
    record.calls = record.host_ns = record.overhead_ns = record.device_ns = record.device_timed_calls = 0;
    record.signatures.clear();
    record.wants_signatures.store(max_signatures_ > 0, std::memory_order_relaxed);
  }
}

std::string CoverageTable::json(bool device_timing) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = R"({"device_timing": )";
  out += device_timing ? "true" : "false";
  out += R"(, "ops": [)";
  bool first = true;
  for (const OpRecord& record : records_) {
    if (record.calls == 0) {
      continue;
    }
    out += first ? "\n" : ",\n";
    first = false;
    out += R"({"name": )";
    append_json_string(out, record.name);
    out += R"(, "path": ")" + std::string(path_name(record.path)) + "\"";
    out += R"(, "calls": )" + std::to_string(record.calls);
    out += R"(, "host_ns": )" + std::to_string(record.host_ns);
    out += R"(, "overhead_ns": )" + std::to_string(record.overhead_ns);
    out += R"(, "device_ns": )";
    out += record.device_timed_calls == record.calls ? std::to_string(record.device_ns) : "null";
    out += R"(, "signatures": [)";
    for (size_t i = 0; i < record.signatures.size(); ++i) {
      out += (i == 0 ? "" : ", ") + record.signatures[i];
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

CoverageTable& coverage_records() {
  static auto* all = new CoverageTable(); // leaked: ops may end during exit
  return *all;
}

// ---- DeviceTimings -----------------------------------------------------------------

void* DeviceTimings::mark(const c10::Stream& stream) noexcept {
  void* event = take_free(stream.device_index());
  try {
    record_event(&event, stream, stream.device_index(), c10::EventFlag::BACKEND_DEFAULT);
    return event;
  } catch (...) {
    destroy_event(event);
    enabled_.store(false, std::memory_order_relaxed);
    return nullptr;
  }
}

void DeviceTimings::add(OpRecord* record, void* start, void* end, c10::DeviceIndex device) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back({record, start, end, device});
    if (++since_settled_ >= kSettleEvery || pending_.size() > kMaxPending) {
      since_settled_ = 0;
      settle_locked(/*wait=*/pending_.size() > kMaxPending);
    }
  } catch (...) {
    // A driver that fails to answer about its own events: no device time.
    enabled_.store(false, std::memory_order_relaxed);
  }
}

void DeviceTimings::discard(void* start, c10::DeviceIndex device) noexcept {
  if (start != nullptr) {
    give_back(device, start);
  }
}

void DeviceTimings::settle_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  settle_locked(/*wait=*/true);
}

void DeviceTimings::settle_locked(bool wait) {
  while (!pending_.empty()) {
    Pending& front = pending_.front();
    // In order: a later one, on another stream, may be done already; it
    // waits for the next settle, which keeps this cheap.
    if (!wait && !query_event(front.end)) {
      return;
    }
    try {
      // Waits on the events alone: an error of the work they follow stays
      // pending for the program's own next synchronisation.
      const double ms = event_elapsed_ms(front.start, front.end, front.device);
      coverage_records().add_device_time(front.record, static_cast<int64_t>(ms * 1e6));
    } catch (...) {
      enabled_.store(false, std::memory_order_relaxed);
    }
    give_back(front.device, front.start);
    give_back(front.device, front.end);
    pending_.pop_front();
  }
}

void* DeviceTimings::take_free(c10::DeviceIndex device) noexcept {
  std::lock_guard<std::mutex> lock(free_mutex_);
  auto found = free_.find(device);
  if (found == free_.end() || found->second.empty()) {
    return nullptr;
  }
  void* event = found->second.back();
  found->second.pop_back();
  return event;
}

void DeviceTimings::give_back(c10::DeviceIndex device, void* event) noexcept {
  try {
    std::lock_guard<std::mutex> lock(free_mutex_);
    std::vector<void*>& kept = free_[device];
    if (kept.size() < kMaxFreeEventsPerDevice) {
      kept.push_back(event);
      return;
    }
  } catch (...) {
  }
  destroy_event(event);
}

DeviceTimings& device_timings() {
  static auto* timings = new DeviceTimings(); // leaked: ops may end during exit
  return *timings;
}

} // namespace scaffold::runtime
