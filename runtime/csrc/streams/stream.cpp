#include "stream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "blocking_wait.h"
#include "capture.h"
#include "device.h"
#include "launch_errors.h"
#include "status.h"

namespace scaffold::runtime {
namespace {

constexpr c10::StreamId kFirstHighPriority = kStreamPoolSize + 1;
constexpr c10::StreamId kFirstNewStream = 2 * kStreamPoolSize + 1;

// Per device: round-robin cursors into the pools, the next fresh id, and
// the driver stream behind each id handed out.
struct DeviceStreams {
  std::atomic<uint32_t> normal_cursor{0};
  std::atomic<uint32_t> high_cursor{0};
  std::atomic<c10::StreamId> next_new{kFirstNewStream};
  // Ids below kFirstNewStream (default + pools): created on first use.
  std::array<std::atomic<drvStream_t>, kFirstNewStream> fixed{};
  std::mutex mutex; // creation and `created`
  std::unordered_map<c10::StreamId, drvStream_t> created; // new_stream() ids
};

DeviceStreams& streams(c10::DeviceIndex device) {
  static auto* all = new std::array<DeviceStreams, kMaxDevices>(); // leaked: used at exit
  return (*all)[device];
}

// The calling thread's current stream id per device; 0 = default stream.
thread_local std::array<c10::StreamId, kMaxDevices> t_current_stream{};

c10::Stream make_stream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, make_device(device), id);
}

// Driver streams are created on the driver's current device.
drvStream_t create_driver_stream(c10::DeviceIndex device, int priority) {
  int previous = 0;
  SCAFFOLD_DRIVER_CHECK(drvGetDevice(&previous));
  SCAFFOLD_DRIVER_CHECK(drvSetDevice(device));
  drvStream_t stream = nullptr;
  const drvError_t status = drvStreamCreate(&stream, priority);
  (void)drvSetDevice(previous);
  SCAFFOLD_DRIVER_CHECK(status);
  return stream;
}

drvStream_t lookup(c10::DeviceIndex device, c10::StreamId id) {
  DeviceStreams& all = streams(device);
  if (id < kFirstNewStream) {
    drvStream_t found = all.fixed[id].load(std::memory_order_acquire);
    if (C10_LIKELY(found != nullptr)) {
      return found;
    }
    std::lock_guard<std::mutex> lock(all.mutex);
    found = all.fixed[id].load(std::memory_order_relaxed);
    if (found == nullptr) {
      if (id == 0) {
        SCAFFOLD_DRIVER_CHECK(drvStreamGetDefault(&found, device));
      } else {
        found = create_driver_stream(device, id >= kFirstHighPriority ? -1 : 0);
      }
      all.fixed[id].store(found, std::memory_order_release);
    }
    return found;
  }
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.created.find(id);
  TORCH_CHECK(it != all.created.end(), "unknown ", c10::get_privateuse1_backend(), " stream id ", id);
  return it->second;
}

struct Event {
  c10::DeviceIndex device;
  c10::EventFlag flag;
  drvEvent_t handle;
  uint64_t sequence = 0; // 0: never recorded
  uint64_t capture = 0; // the capture its last record is a point of (capture.h), 0: none
};

std::atomic<uint64_t> g_event_sequence{0};

constexpr const char* kCapturedEventOnHost =
    "waits for an event recorded in the capture (Event.query, synchronize, elapsed_time), which completes only "
    "at a replay,";

} // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  check_device_index(device);
  return make_stream(device, 0);
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  check_device_index(device);
  auto& cursor = high_priority ? streams(device).high_cursor : streams(device).normal_cursor;
  const auto slot = static_cast<c10::StreamId>(cursor.fetch_add(1) % kStreamPoolSize);
  return make_stream(device, (high_priority ? kFirstHighPriority : 1) + slot);
}

c10::StreamId stream_id_of(c10::DeviceIndex device, drvStream_t driver) {
  DeviceStreams& all = streams(device);
  for (c10::StreamId id = 0; id < kFirstNewStream; ++id) {
    if (all.fixed[id].load(std::memory_order_acquire) == driver) {
      return id;
    }
  }
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const auto& [id, stream] : all.created) {
    if (stream == driver) {
      return id;
    }
  }
  return -1;
}

c10::Stream new_stream(c10::DeviceIndex device, int priority) {
  check_device_index(device);
  drvStream_t stream = create_driver_stream(device, priority);
  DeviceStreams& all = streams(device);
  std::lock_guard<std::mutex> lock(all.mutex);
  const c10::StreamId id = all.next_new.fetch_add(1);
  all.created.emplace(id, stream);
  return make_stream(device, id);
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
      id >= 0 && id < streams(stream.device_index()).next_new.load(),
      "unknown ",
      c10::get_privateuse1_backend(),
      " stream id ",
      id,
      " on ",
      device_string(stream.device_index()));
}

drvStream_t driver_stream(const c10::Stream& stream) {
  check_stream(stream);
  return lookup(stream.device_index(), stream.id());
}

drvStream_t current_driver_stream(c10::DeviceIndex device) {
  TORCH_INTERNAL_ASSERT(device >= 0 && device < kMaxDevices, "current_driver_stream: device ", static_cast<int>(device));
  return lookup(device, t_current_stream[device]);
}

int stream_priority(const c10::Stream& stream) {
  int priority = 0;
  SCAFFOLD_DRIVER_CHECK(drvStreamGetPriority(driver_stream(stream), &priority));
  return priority;
}

namespace {

// drvStreamSynchronize, with the GIL released when it has to block (see
// blocking_wait.h). An idle stream -- most host views' waits -- keeps it.
void block_on(drvStream_t stream) {
  if (drvStreamQuery(stream) != drvErrorNotReady) {
    SCAFFOLD_DRIVER_CHECK(drvStreamSynchronize(stream)); // returns at once, or reports an error
    return;
  }
  const BlockingWait blocking;
  SCAFFOLD_DRIVER_CHECK(drvStreamSynchronize(stream));
}

} // namespace

void wait_for_current_stream(c10::DeviceIndex device) {
  drvStream_t stream = lookup(device, t_current_stream[device]);
  if (capture_underway()) {
    refuse_if_captured(stream, "reads device memory on the host (a host synchronisation, a kernel run inline or the CPU fallback)");
  }
  block_on(stream);
  check_launch_errors(device);
}

void pause_stream_for_testing(const c10::Stream& stream, bool paused) {
  SCAFFOLD_DRIVER_CHECK(drvTestingPauseStream(driver_stream(stream), paused ? 1 : 0));
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
  drvStream_t driver = driver_stream(stream);
  if (capture_underway()) {
    refuse_if_captured(driver, "queries the stream (Stream.query())");
  }
  const drvError_t status = drvStreamQuery(driver);
  if (status == drvErrorNotReady) {
    return false;
  }
  SCAFFOLD_DRIVER_CHECK(status);
  check_launch_errors(stream.device_index()); // as cudaStreamQuery reports them
  return true;
}

void synchronize_stream(const c10::Stream& stream) {
  drvStream_t driver = driver_stream(stream);
  if (capture_underway()) {
    refuse_if_captured(driver, "synchronises with the stream (Stream.synchronize())");
  }
  block_on(driver);
  check_launch_errors(stream.device_index());
}

void synchronize_device(c10::DeviceIndex device) {
  check_device_index(device);
  if (capture_underway()) {
    refuse_if_device_captured(device, "synchronises with the device (synchronize())");
  }
  int previous = 0;
  SCAFFOLD_DRIVER_CHECK(drvGetDevice(&previous));
  SCAFFOLD_DRIVER_CHECK(drvSetDevice(device));
  drvError_t status = drvSuccess;
  {
    const BlockingWait blocking;
    status = drvDeviceSynchronize();
  }
  (void)drvSetDevice(previous);
  SCAFFOLD_DRIVER_CHECK(status);
  check_launch_errors(device);
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
    drvEvent_t handle = nullptr;
    const unsigned flags =
        flag == c10::EventFlag::BACKEND_DEFAULT ? DRV_EVENT_DEFAULT : DRV_EVENT_DISABLE_TIMING;
    SCAFFOLD_DRIVER_CHECK(drvEventCreate(&handle, flags));
    e = new Event{device, flag, handle, 0};
    *event = e;
  } else {
    TORCH_CHECK(
        e->device == device,
        "event was created on ",
        device_string(e->device),
        " but is recorded on ",
        device_string(device));
  }
  const drvStream_t recorder = driver_stream(stream);
  SCAFFOLD_DRIVER_CHECK(drvEventRecord(e->handle, recorder));
  e->sequence = g_event_sequence.fetch_add(1) + 1;
  e->capture = capture_id_of(recorder);
}

void block_on_event(void* event, const c10::Stream& stream) {
  drvStream_t waiter = driver_stream(stream);
  if (event == nullptr) {
    return; // never recorded: nothing to wait for
  }
  const auto* e = static_cast<Event*>(event);
  if (capture_underway() && e->capture != capture_id_of(waiter)) {
    refuse_if_captured(
        waiter,
        "waits on an event recorded outside the capture (Stream.wait_event, wait_stream), which a replay could "
        "not wait for,");
  }
  SCAFFOLD_DRIVER_CHECK(drvStreamWaitEvent(waiter, e->handle));
  if (e->capture != 0) {
    joined_capture(e->capture, waiter);
  }
}

bool query_event(void* event) {
  if (event == nullptr) {
    return true; // never recorded -> complete, by contract
  }
  const auto* e = static_cast<Event*>(event);
  refuse_if_capture_live(e->capture, kCapturedEventOnHost);
  const drvError_t status = drvEventQuery(e->handle);
  if (status == drvErrorNotReady) {
    return false;
  }
  SCAFFOLD_DRIVER_CHECK(status);
  return true;
}

void synchronize_event(void* event) {
  if (event != nullptr) {
    auto* e = static_cast<Event*>(event);
    refuse_if_capture_live(e->capture, kCapturedEventOnHost);
    {
      const BlockingWait blocking;
      SCAFFOLD_DRIVER_CHECK(drvEventSynchronize(e->handle));
    }
    check_launch_errors(e->device);
  }
}

void destroy_event(void* event) noexcept {
  if (event != nullptr) {
    auto* e = static_cast<Event*>(event);
    (void)drvEventDestroy(e->handle); // noexcept path: nothing to report
    delete e;
  }
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
  refuse_if_capture_live(a->capture, kCapturedEventOnHost);
  refuse_if_capture_live(b->capture, kCapturedEventOnHost);
  // As in CUDA, elapsed time needs completed events: wait for them.
  {
    const BlockingWait blocking;
    SCAFFOLD_DRIVER_CHECK(drvEventSynchronize(a->handle));
    SCAFFOLD_DRIVER_CHECK(drvEventSynchronize(b->handle));
  }
  float ms = 0;
  SCAFFOLD_DRIVER_CHECK(drvEventElapsedTime(&ms, a->handle, b->handle));
  return ms;
}

uint64_t event_sequence_number(void* event) {
  return event == nullptr ? 0 : static_cast<Event*>(event)->sequence;
}

} // namespace scaffold::runtime
