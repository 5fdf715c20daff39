#include "stream.h"

#include <array>
#include <atomic>
#include <chrono>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "device.h"

namespace scaffold::runtime {
namespace {

constexpr c10::StreamId kFirstHighPriority = kStreamPoolSize + 1;
constexpr c10::StreamId kFirstNewStream = 2 * kStreamPoolSize + 1;

// Per device: round-robin cursors into the pools and the next fresh id.
struct StreamIds {
  std::atomic<uint32_t> normal_cursor{0};
  std::atomic<uint32_t> high_cursor{0};
  std::atomic<c10::StreamId> next_new{kFirstNewStream};
};

StreamIds& ids(c10::DeviceIndex device) {
  static std::array<StreamIds, kMaxDevices> all;
  return all[device];
}

// The calling thread's current stream id per device; 0 = default stream.
thread_local std::array<c10::StreamId, kMaxDevices> t_current_stream{};

c10::Stream make_stream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, make_device(device), id);
}

struct Event {
  c10::DeviceIndex device;
  c10::EventFlag flag;
  uint64_t sequence = 0; // 0: never recorded
  std::chrono::steady_clock::time_point recorded_at;
};

std::atomic<uint64_t> g_event_sequence{0};

} // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  check_device_index(device);
  return make_stream(device, 0);
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  check_device_index(device);
  auto& cursor = high_priority ? ids(device).high_cursor : ids(device).normal_cursor;
  const auto slot = static_cast<c10::StreamId>(cursor.fetch_add(1) % kStreamPoolSize);
  return make_stream(device, (high_priority ? kFirstHighPriority : 1) + slot);
}

c10::Stream new_stream(c10::DeviceIndex device, int /*priority*/) {
  check_device_index(device);
  // Priorities do not matter when nothing runs concurrently.
  return make_stream(device, ids(device).next_new.fetch_add(1));
}

void check_stream(const c10::Stream& stream) {
  TORCH_CHECK(
      stream.device_type() == c10::DeviceType::PrivateUse1,
      "expected a ",
      c10::get_privateuse1_backend(),
      " stream, got a stream of device type ",
      stream.device_type());
  check_device_index(stream.device_index());
  const auto id = stream.id();
  TORCH_CHECK(
      id >= 0 && id < ids(stream.device_index()).next_new.load(),
      "unknown ",
      c10::get_privateuse1_backend(),
      " stream id ",
      id,
      " on ",
      device_string(stream.device_index()));
}

c10::Stream current_stream(c10::DeviceIndex device) {
  check_device_index(device);
  return make_stream(device, t_current_stream[device]);
}

c10::Stream exchange_stream(const c10::Stream& stream) {
  check_stream(stream);
  const auto device = stream.device_index();
  const auto previous = t_current_stream[device];
  t_current_stream[device] = stream.id();
  return make_stream(device, previous);
}

bool query_stream(const c10::Stream& stream) {
  check_stream(stream);
  return true;
}

void synchronize_stream(const c10::Stream& stream) {
  check_stream(stream);
}

void synchronize_device(c10::DeviceIndex device) {
  check_device_index(device);
}

void record_event(
    void** event,
    const c10::Stream& stream,
    c10::DeviceIndex device,
    c10::EventFlag flag) {
  check_stream(stream);
  // c10's InlineEvent passes -1 until the event's first record.
  if (device == -1) {
    device = stream.device_index();
  }
  TORCH_CHECK(
      device == stream.device_index(),
      "event device ",
      device_string(device),
      " does not match the recording stream's device ",
      device_string(stream.device_index()));
  auto* e = static_cast<Event*>(*event);
  if (e == nullptr) {
    e = new Event{device, flag, 0, {}};
    *event = e;
  } else {
    TORCH_CHECK(
        e->device == device,
        "event was created on ",
        device_string(e->device),
        " but is recorded on ",
        device_string(device));
  }
  // Work is done by the time record() is called, so the record time is
  // also the completion time.
  e->sequence = g_event_sequence.fetch_add(1) + 1;
  e->recorded_at = std::chrono::steady_clock::now();
}

void block_on_event(void* event, const c10::Stream& stream) {
  check_stream(stream);
  // Everything recorded has completed: nothing to wait for.
  (void)event;
}

bool query_event(void* /*event*/) {
  // Never recorded -> true by contract; recorded -> already complete.
  return true;
}

void synchronize_event(void* /*event*/) {}

void destroy_event(void* event) noexcept {
  delete static_cast<Event*>(event);
}

double event_elapsed_ms(void* start, void* end, c10::DeviceIndex device) {
  auto* a = static_cast<Event*>(start);
  auto* b = static_cast<Event*>(end);
  TORCH_CHECK(
      a != nullptr && b != nullptr && a->sequence != 0 && b->sequence != 0,
      "elapsed_time: both events must be recorded first");
  TORCH_CHECK(
      a->flag == c10::EventFlag::BACKEND_DEFAULT &&
          b->flag == c10::EventFlag::BACKEND_DEFAULT,
      "elapsed_time: both events must be created with enable_timing=True");
  TORCH_CHECK(
      a->device == device && b->device == device,
      "elapsed_time: events must be recorded on ",
      device_string(device));
  const std::chrono::duration<double, std::milli> elapsed =
      b->recorded_at - a->recorded_at;
  return elapsed.count();
}

uint64_t event_sequence_number(void* event) {
  return event == nullptr ? 0 : static_cast<Event*>(event)->sequence;
}

} // namespace scaffold::runtime
