// The simulated driver: streams (one worker thread each, running its work in
// order), events, and the copies and kernels enqueued on streams.
//
// SCAFFOLD_LAUNCH_BLOCKING=1 runs every piece of work on the calling thread
// before the call returns, like CUDA_LAUNCH_BLOCKING=1: a bug that goes away
// with it is a missing synchronisation.
#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "simulated.h"

// Handles are the structs the C API names; their state is shared with the
// work that refers to them, so destroying a handle with work still queued is
// safe.
struct drvStream_st {
  int device = 0;
  int priority = 0;
  bool is_default = false;

  std::mutex mutex;
  std::condition_variable work_ready; // worker waits
  std::condition_variable work_done; // synchronize waits
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  bool paused = false;
  bool stopping = false;
  std::thread worker;

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      work_ready.wait(lock, [&] { return stopping || (!paused && !queue.empty()); });
      if (queue.empty() || paused) { // stopping, and nothing runnable left
        if (stopping && queue.empty()) {
          return;
        }
        continue;
      }
      std::function<void()> work = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      work();
      work = nullptr; // release what it captured before reporting completion
      lock.lock();
      ++completed;
      work_done.notify_all();
    }
  }

  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex);
    const uint64_t target = enqueued;
    work_done.wait(lock, [&] { return completed >= target; });
  }
};

struct EventState {
  unsigned flags = 0;
  std::mutex mutex;
  std::condition_variable done;
  uint64_t recorded = 0; // generation of the last record
  uint64_t completed = 0; // generation of the last completed record
  std::chrono::steady_clock::time_point completed_at;

  void complete(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex);
    if (generation > completed) {
      completed = generation;
      completed_at = std::chrono::steady_clock::now();
    }
    done.notify_all();
  }

  void wait_for(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return completed >= generation; });
  }
};

struct drvEvent_st {
  std::shared_ptr<EventState> state;
};

namespace scaffold::driver {
namespace {

// Every stream of a device, for device-wide synchronisation.
struct DeviceStreams {
  std::mutex mutex;
  drvStream_t default_stream = nullptr;
  std::vector<drvStream_t> live;
};

DeviceStreams& device_streams(int device) {
  static auto* all = new std::array<DeviceStreams, kMaxDevices>(); // leaked on purpose
  return (*all)[device];
}

// Set in a child forked after a stream worker started: the workers did not
// survive the fork, so work enqueued there would never run.
std::atomic<bool> g_workers_lost{false};

void mark_workers_lost() {
  g_workers_lost.store(true, std::memory_order_relaxed);
}

drvError_t check_not_forked() {
  return g_workers_lost.load(std::memory_order_relaxed)
      ? fail(drvErrorForkedProcess, "streams cannot be used in a process forked after their first use")
      : drvSuccess;
}

drvStream_t start_stream(int device, int priority, bool is_default) {
  auto* stream = new drvStream_st();
  stream->device = device;
  stream->priority = priority;
  stream->is_default = is_default;
  if (!config().launch_blocking) {
    static std::once_flag fork_handler;
    std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, &mark_workers_lost); });
    stream->worker = std::thread([stream] { stream->run(); });
  }
  return stream;
}

drvError_t default_stream(int device, drvStream_t* out) {
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::lock_guard<std::mutex> lock(streams.mutex);
  if (streams.default_stream == nullptr) {
    // Never destroyed: its worker lives as long as the process.
    streams.default_stream = start_stream(device, 0, true);
    streams.live.push_back(streams.default_stream);
  }
  *out = streams.default_stream;
  return drvSuccess;
}

drvError_t resolve(drvStream_t* stream) {
  if (*stream != nullptr) {
    return drvSuccess;
  }
  return default_stream(current_device_unchecked(), stream);
}

drvError_t copy_now(void* dst, const void* src, size_t size, drvMemcpyKind kind, void** host_dst, const void** host_src) {
  *host_dst = kind == drvMemcpyDeviceToHost ? dst : translate(dst, size);
  *host_src = kind == drvMemcpyHostToDevice ? src : translate(src, size);
  if (*host_dst == nullptr || *host_src == nullptr) {
    return fail(drvErrorInvalidValue, "memcpy: a device-side pointer is not device memory of this driver (or the range runs past it)");
  }
  return drvSuccess;
}

} // namespace

drvError_t enqueue(drvStream_t stream, std::function<void()> work) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  if (config().launch_blocking) {
    work();
    std::lock_guard<std::mutex> lock(stream->mutex);
    ++stream->enqueued;
    ++stream->completed;
    return drvSuccess;
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->queue.push_back(std::move(work));
    ++stream->enqueued;
  }
  stream->work_ready.notify_one();
  return drvSuccess;
}

drvError_t synchronize_device(int device) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::vector<drvStream_t> live;
  {
    std::lock_guard<std::mutex> lock(streams.mutex);
    live = streams.live;
  }
  for (drvStream_t stream : live) {
    stream->synchronize();
  }
  return drvSuccess;
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

drvError_t drvMemcpyAsync(void* dst, const void* src, size_t size, drvMemcpyKind kind, drvStream_t stream) {
  if (size == 0) {
    return drvSuccess;
  }
  void* host_dst = nullptr;
  const void* host_src = nullptr;
  if (drvError_t status = copy_now(dst, src, size, kind, &host_dst, &host_src); status != drvSuccess) {
    return status;
  }
  return enqueue(stream, [host_dst, host_src, size] { std::memmove(host_dst, host_src, size); });
}

drvError_t drvMemcpy(void* dst, const void* src, size_t size, drvMemcpyKind kind) {
  if (drvError_t status = drvMemcpyAsync(dst, src, size, kind, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvMemsetAsync(void* device_ptr, int value, size_t size, drvStream_t stream) {
  if (size == 0) {
    return drvSuccess;
  }
  void* host = translate(device_ptr, size);
  if (host == nullptr) {
    return fail(drvErrorInvalidValue, "memset: not device memory of this driver (or the range runs past it)");
  }
  return enqueue(stream, [host, value, size] { std::memset(host, value, size); });
}

drvError_t drvMemset(void* device_ptr, int value, size_t size) {
  if (drvError_t status = drvMemsetAsync(device_ptr, value, size, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvLaunchHostFunc(drvStream_t stream, void (*fn)(void*), void* user_data) {
  if (fn == nullptr) {
    return fail(drvErrorInvalidValue, "drvLaunchHostFunc: null function");
  }
  return enqueue(stream, [fn, user_data] { fn(user_data); });
}

drvError_t drvDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) {
    *least = 0;
  }
  if (greatest != nullptr) {
    *greatest = -1;
  }
  return drvSuccess;
}

drvError_t drvStreamCreate(drvStream_t* stream, int priority) {
  if (stream == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamCreate: null output");
  }
  const int device = current_device_unchecked();
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  // Clamp into [greatest, least] = [-1, 0], as CUDA does.
  priority = priority < -1 ? -1 : (priority > 0 ? 0 : priority);
  DeviceStreams& streams = device_streams(device);
  drvStream_t created = start_stream(device, priority, false);
  std::lock_guard<std::mutex> lock(streams.mutex);
  streams.live.push_back(created);
  *stream = created;
  return drvSuccess;
}

drvError_t drvStreamDestroy(drvStream_t stream) {
  if (stream == nullptr || stream->is_default) {
    return fail(drvErrorInvalidHandle, "drvStreamDestroy: the default stream cannot be destroyed");
  }
  stream->synchronize();
  {
    DeviceStreams& streams = device_streams(stream->device);
    std::lock_guard<std::mutex> lock(streams.mutex);
    std::erase(streams.live, stream);
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->stopping = true;
    stream->paused = false;
  }
  stream->work_ready.notify_one();
  if (stream->worker.joinable()) {
    stream->worker.join();
  }
  delete stream;
  return drvSuccess;
}

drvError_t drvStreamGetDefault(drvStream_t* stream, int device) {
  if (stream == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetDefault: null output");
  }
  return default_stream(device, stream);
}

drvError_t drvStreamQuery(drvStream_t stream) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  return stream->completed == stream->enqueued ? drvSuccess : drvErrorNotReady;
}

drvError_t drvStreamSynchronize(drvStream_t stream) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  stream->synchronize();
  return drvSuccess;
}

drvError_t drvStreamGetPriority(drvStream_t stream, int* priority) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  *priority = stream->priority;
  return drvSuccess;
}

drvError_t drvStreamGetDevice(drvStream_t stream, int* device) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  *device = stream->device;
  return drvSuccess;
}

drvError_t drvStreamWaitEvent(drvStream_t stream, drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvStreamWaitEvent: null event");
  }
  std::shared_ptr<EventState> state = event->state;
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->completed >= state->recorded) {
      return resolve(&stream); // nothing pending: no work to add
    }
    target = state->recorded;
  }
  return enqueue(stream, [state, target] { state->wait_for(target); });
}

drvError_t drvEventCreate(drvEvent_t* event, unsigned flags) {
  if (event == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventCreate: null output");
  }
  auto* created = new drvEvent_st{std::make_shared<EventState>()};
  created->state->flags = flags;
  *event = created;
  return drvSuccess;
}

drvError_t drvEventDestroy(drvEvent_t event) {
  delete event; // work still queued keeps the state alive
  return drvSuccess;
}

drvError_t drvEventRecord(drvEvent_t event, drvStream_t stream) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventRecord: null event");
  }
  std::shared_ptr<EventState> state = event->state;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    generation = ++state->recorded;
  }
  const drvError_t status = enqueue(stream, [state, generation] { state->complete(generation); });
  if (status != drvSuccess) {
    state->complete(generation); // nothing will run it: don't leave waiters hanging
  }
  return status;
}

drvError_t drvEventQuery(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventQuery: null event");
  }
  std::lock_guard<std::mutex> lock(event->state->mutex);
  return event->state->completed >= event->state->recorded ? drvSuccess : drvErrorNotReady;
}

drvError_t drvEventSynchronize(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventSynchronize: null event");
  }
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(event->state->mutex);
    target = event->state->recorded;
  }
  event->state->wait_for(target);
  return drvSuccess;
}

drvError_t drvEventElapsedTime(float* ms, drvEvent_t start, drvEvent_t end) {
  if (ms == nullptr || start == nullptr || end == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventElapsedTime: null argument");
  }
  std::chrono::steady_clock::time_point times[2];
  drvEvent_t events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    EventState& state = *events[i]->state;
    std::lock_guard<std::mutex> lock(state.mutex);
    if ((state.flags & DRV_EVENT_DISABLE_TIMING) != 0) {
      return fail(drvErrorInvalidHandle, "elapsed time needs events created with timing enabled");
    }
    if (state.recorded == 0) {
      return fail(drvErrorInvalidHandle, "elapsed time needs both events recorded first");
    }
    if (state.completed < state.recorded) {
      return fail(drvErrorNotReady, "an event's work has not completed yet");
    }
    times[i] = state.completed_at;
  }
  *ms = std::chrono::duration<float, std::milli>(times[1] - times[0]).count();
  return drvSuccess;
}

drvError_t drvTestingPauseStream(drvStream_t stream, int paused) {
  if (config().launch_blocking) {
    return fail(drvErrorNotSupported, "streams cannot be paused with SCAFFOLD_LAUNCH_BLOCKING=1");
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->paused = paused != 0;
  }
  stream->work_ready.notify_one();
  return drvSuccess;
}

} // extern "C"
