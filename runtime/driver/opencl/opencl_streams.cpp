// The OpenCL driver: streams, and the host functions launched on them.
//
// A stream is an in-order command queue of its device (with profiling, for
// event timing); each device has a default stream, created at first use and
// never destroyed.
//
// A stream keeps the event of its last command (enqueue()), so
// drvStreamQuery is one status read, exact also right after a
// synchronisation (a fresh marker would still be pending then). Work a
// kernel enqueues on the native queue itself (drvStreamGetNativeHandle) is
// ordered with the stream's; a query with nothing enqueued through the
// driver since then enqueues a marker behind it.
//
// Every enqueue is flushed: OpenCL may hold commands back until a flush, and
// the runtime expects enqueued work to run without a synchronisation (a
// query polled in a loop; another queue's barrier on an event, which OpenCL
// lets run only once the event's queue is flushed). SCAFFOLD_LAUNCH_BLOCKING=1
// ends every enqueue with clFinish instead.
//
// A host function (drvLaunchHostFunc: a kernel the host runs) sits between
// a marker and a barrier: the marker completes after the stream's earlier
// work, its completion callback hands the function to the stream's host
// thread, which runs it and then completes the user event that the barrier
// -- and so the stream's later work -- waits for. The function runs on a
// thread of the driver, not in the callback: OpenCL leaves the callback's
// thread to the implementation and forbids blocking calls in it, and a host
// function is a whole kernel that may block (take the GIL, wait for a
// collective). The runtime's host functions launch no device work; a host
// function must not wait for its own stream (the stream waits for it), and
// work it enqueued would not be ordered with its stream.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "opencl_driver.h"

namespace scaffold::opencl {
namespace {

struct HostCall {
  drvStream_t stream = nullptr;
  void (*fn)(void*) = nullptr;
  void* user_data = nullptr;
  cl_event done = nullptr; // a user event: the barrier after the call waits for it
};

// The stream whose host function the calling thread runs, if any.
thread_local drvStream_t t_host_function_stream = nullptr;

} // namespace
} // namespace scaffold::opencl

using scaffold::opencl::HostCall;

struct drvStream_st {
  int device = 0;
  bool is_default = false;
  cl_command_queue queue = nullptr;

  // Commands are enqueued under `order`, which guards `last` too: the event
  // of the stream's last command (null before the first).
  std::mutex order;
  cl_event last = nullptr;
  // Set when a kernel asked for the native queue: its commands may follow `last`.
  bool native_pending = false;

  // Host functions whose marker completed, run in order by `host_thread`
  // (started at the first drvLaunchHostFunc).
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::unique_ptr<HostCall>> calls;
  std::thread host_thread;
  bool stopping = false;

  // Notifies under the lock: once the host thread runs the call, the stream
  // may be destroyed, and the caller (an OpenCL callback) must be done with it.
  void post(std::unique_ptr<HostCall> call) {
    std::lock_guard<std::mutex> lock(mutex);
    calls.push_back(std::move(call));
    ready.notify_one();
  }

  void start_host_thread() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!host_thread.joinable()) {
      host_thread = std::thread([this] { serve(); });
    }
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      ready.wait(lock, [&] { return stopping || !calls.empty(); });
      if (calls.empty()) {
        return; // stopping, with every call run (drvStreamDestroy finished the queue first)
      }
      std::unique_ptr<HostCall> call = std::move(calls.front());
      calls.pop_front();
      lock.unlock();
      scaffold::opencl::t_host_function_stream = this;
      call->fn(call->user_data);
      scaffold::opencl::t_host_function_stream = nullptr;
      clSetUserEventStatus(call->done, CL_COMPLETE);
      clReleaseEvent(call->done);
      lock.lock();
    }
  }

  void stop_host_thread() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    ready.notify_one();
    if (host_thread.joinable()) {
      host_thread.join();
    }
  }
};

namespace scaffold::opencl {
namespace {

// Every stream of a device, for device-wide synchronisation.
struct DeviceStreams {
  std::mutex mutex;
  drvStream_t default_stream = nullptr;
  std::vector<drvStream_t> live;
};

DeviceStreams& device_streams(int device) {
  // Leaked on purpose, like the default streams; sized for the platform's
  // devices at the first call (`device` is checked by then).
  static auto* all = [] {
    const Platform* p = nullptr;
    platform(&p);
    return new std::vector<DeviceStreams>(p->devices.size());
  }();
  return (*all)[static_cast<size_t>(device)];
}

bool launch_blocking() {
  static const bool blocking = [] {
    const Platform* p = nullptr;
    return platform(&p) == drvSuccess && p->launch_blocking;
  }();
  return blocking;
}

drvError_t create_stream(int device, bool is_default, drvStream_t* out) {
  const Platform* p = nullptr;
  platform(&p);
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = clCreateCommandQueue(
      p->context, p->devices[static_cast<size_t>(device)].id, CL_QUEUE_PROFILING_ENABLE, &status);
  if (status != CL_SUCCESS) {
    return fail_cl("clCreateCommandQueue", status);
  }
  auto* stream = new drvStream_st();
  stream->device = device;
  stream->is_default = is_default;
  stream->queue = queue;
  *out = stream;
  return drvSuccess;
}

drvError_t default_stream(int device, drvStream_t* out) {
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::lock_guard<std::mutex> lock(streams.mutex);
  if (streams.default_stream == nullptr) {
    if (drvError_t status = create_stream(device, true, &streams.default_stream); status != drvSuccess) {
      return status;
    }
    streams.live.push_back(streams.default_stream);
  }
  *out = streams.default_stream;
  return drvSuccess;
}

drvError_t finish(drvStream_t stream) {
  if (t_host_function_stream == stream) {
    return fail(
        drvErrorInvalidValue,
        "a host function cannot wait for its own stream: the stream waits for the host function");
  }
  return checked(clFinish(stream->queue), "clFinish");
}

void CL_CALLBACK marker_complete(cl_event, cl_int, void* user_data) {
  std::unique_ptr<HostCall> call(static_cast<HostCall*>(user_data));
  drvStream_t stream = call->stream;
  stream->post(std::move(call));
}

} // namespace

drvError_t resolve_stream(drvStream_t* stream) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (*stream != nullptr) {
    return drvSuccess;
  }
  return default_stream(current_device(), stream);
}

drvError_t enqueue(drvStream_t stream, const std::function<drvError_t(cl_command_queue queue, cl_event* event)>& command) {
  cl_event event = nullptr;
  {
    std::lock_guard<std::mutex> lock(stream->order);
    if (drvError_t status = command(stream->queue, &event); status != drvSuccess) {
      return status;
    }
    std::swap(stream->last, event);
    stream->native_pending = false; // whatever a kernel enqueued natively is before this command
  }
  if (event != nullptr) {
    clReleaseEvent(event);
  }
  return launch_blocking() ? finish(stream) : checked(clFlush(stream->queue), "clFlush");
}

drvError_t completion(cl_event event, const char* failed) {
  cl_int state = CL_QUEUED;
  if (drvError_t status = checked(
          clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr), "clGetEventInfo");
      status != drvSuccess) {
    return status;
  }
  if (state < 0) {
    return fail_cl(failed, state);
  }
  return state == CL_COMPLETE ? drvSuccess : drvErrorNotReady;
}

bool in_host_function() noexcept {
  return t_host_function_stream != nullptr;
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
    if (drvError_t status = finish(stream); status != drvSuccess) {
      return status;
    }
  }
  return drvSuccess;
}

} // namespace scaffold::opencl

using namespace scaffold::opencl;

extern "C" {

drvError_t drvLaunchHostFunc(drvStream_t stream, void (*fn)(void*), void* user_data) {
  if (fn == nullptr) {
    return fail(drvErrorInvalidValue, "drvLaunchHostFunc: null function");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  if (launch_blocking()) {
    // The queue is idle once finished: the function runs after its earlier
    // work and before anything enqueued later.
    if (drvError_t status = finish(stream); status != drvSuccess) {
      return status;
    }
    fn(user_data);
    return drvSuccess;
  }
  stream->start_host_thread();
  const Platform* p = nullptr;
  platform(&p);
  cl_int created = CL_SUCCESS;
  cl_event done = clCreateUserEvent(p->context, &created);
  if (created != CL_SUCCESS) {
    return fail_cl("clCreateUserEvent", created);
  }
  return enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
    cl_event marker = nullptr;
    if (drvError_t status = checked(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
        status != drvSuccess) {
      clReleaseEvent(done);
      return status;
    }
    const HeldEvent held_marker(marker);
    if (drvError_t status = checked(clEnqueueBarrierWithWaitList(queue, 1, &done, event), "clEnqueueBarrierWithWaitList");
        status != drvSuccess) {
      clReleaseEvent(done); // nothing waits for it; the marker alone completes harmlessly
      return status;
    }
    // Registered last: the callback may run at once, with everything it needs in place.
    auto call = std::make_unique<HostCall>(HostCall{stream, fn, user_data, done});
    if (drvError_t status = checked(clSetEventCallback(marker, CL_COMPLETE, &marker_complete, call.get()), "clSetEventCallback");
        status != drvSuccess) {
      // The function will not run (the caller keeps its data): let the stream go on.
      clSetUserEventStatus(done, CL_COMPLETE);
      clReleaseEvent(done);
      return status;
    }
    call.release(); // marker_complete owns it now
    return drvSuccess;
  });
}

drvError_t drvLimitKernelThreads(int threads) {
  // A hint for kernels that compute on the host; OpenCL kernels size their own work.
  return threads >= 1 ? drvSuccess
                      : fail(drvErrorInvalidValue, "drvLimitKernelThreads: threads must be at least 1, got " + std::to_string(threads));
}

drvError_t drvDeviceGetStreamPriorityRange(int* least, int* greatest) {
  // OpenCL 1.2 queues have no priorities.
  if (least != nullptr) {
    *least = 0;
  }
  if (greatest != nullptr) {
    *greatest = 0;
  }
  return drvSuccess;
}

drvError_t drvStreamCreate(drvStream_t* stream, int priority) {
  if (stream == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamCreate: null output");
  }
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  const int device = current_device();
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  drvStream_t created = nullptr;
  if (drvError_t status = create_stream(device, false, &created); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::lock_guard<std::mutex> lock(streams.mutex);
  streams.live.push_back(created);
  *stream = created;
  return drvSuccess;
}

drvError_t drvStreamDestroy(drvStream_t stream) {
  if (stream == nullptr || stream->is_default) {
    return fail(drvErrorInvalidHandle, "drvStreamDestroy: the default stream cannot be destroyed");
  }
  if (drvError_t status = finish(stream); status != drvSuccess) {
    return status;
  }
  {
    DeviceStreams& streams = device_streams(stream->device);
    std::lock_guard<std::mutex> lock(streams.mutex);
    std::erase(streams.live, stream);
  }
  stream->stop_host_thread();
  if (stream->last != nullptr) {
    clReleaseEvent(stream->last);
  }
  clReleaseCommandQueue(stream->queue);
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
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  cl_event last = nullptr;
  {
    std::lock_guard<std::mutex> lock(stream->order);
    if (stream->native_pending) {
      // A marker completes once everything enqueued before it has.
      cl_event marker = nullptr;
      if (drvError_t status = checked(clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
          status != drvSuccess) {
        return status;
      }
      std::swap(stream->last, marker);
      if (marker != nullptr) {
        clReleaseEvent(marker);
      }
      stream->native_pending = false;
      if (drvError_t status = checked(clFlush(stream->queue), "clFlush"); status != drvSuccess) {
        return status;
      }
    }
    last = stream->last;
    if (last != nullptr) {
      clRetainEvent(last);
    }
  }
  const HeldEvent held(last);
  return last == nullptr ? drvSuccess : completion(last, "drvStreamQuery: the stream's work failed");
}

drvError_t drvStreamSynchronize(drvStream_t stream) {
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  return finish(stream);
}

drvError_t drvStreamGetPriority(drvStream_t stream, int* priority) {
  if (priority == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetPriority: null output");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  *priority = 0; // the range is 0..0: every priority clamps to 0
  return drvSuccess;
}

drvError_t drvStreamGetDevice(drvStream_t stream, int* device) {
  if (device == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetDevice: null output");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  *device = stream->device;
  return drvSuccess;
}

drvError_t drvStreamGetNativeHandle(drvStream_t stream, void** native) {
  if (native == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetNativeHandle: null output");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  {
    std::lock_guard<std::mutex> lock(stream->order);
    stream->native_pending = true; // the caller is about to enqueue: see the top of this file
  }
  *native = stream->queue;
  return drvSuccess;
}

} // extern "C"
