// The OpenCL driver: events.
//
// A record is a marker (clEnqueueMarkerWithWaitList), which completes once
// the work enqueued before it on the stream has; the event keeps the last
// one. Another stream waits for it with a barrier (one context holds every
// device, so any queue may wait for any marker), the host with
// clWaitForEvents, and the elapsed time between two records is the
// difference of their markers' CL_PROFILING_COMMAND_END (the queues profile).
// An event never recorded counts as complete.
#include <cstdint>
#include <mutex>
#include <utility>

#include "opencl_driver.h"

struct drvEvent_st {
  unsigned flags = 0;
  std::mutex mutex;
  cl_event last = nullptr; // the marker of the last record; null: never recorded

  // The last record's marker, retained for the caller; null if none.
  cl_event last_record() {
    std::lock_guard<std::mutex> lock(mutex);
    if (last != nullptr) {
      clRetainEvent(last);
    }
    return last;
  }
};

using namespace scaffold::opencl;

extern "C" {

drvError_t drvStreamWaitEvent(drvStream_t stream, drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvStreamWaitEvent: null event");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  const HeldEvent record(event->last_record());
  if (record.event == nullptr) {
    return drvSuccess; // never recorded: complete
  }
  // One context holds every device, so any stream may wait for any marker.
  return enqueue(stream, [&](cl_command_queue queue, cl_event* barrier) {
    return checked(clEnqueueBarrierWithWaitList(queue, 1, &record.event, barrier), "clEnqueueBarrierWithWaitList");
  });
}

drvError_t drvEventCreate(drvEvent_t* event, unsigned flags) {
  if (event == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventCreate: null output");
  }
  auto* created = new drvEvent_st();
  created->flags = flags;
  *event = created;
  return drvSuccess;
}

drvError_t drvEventDestroy(drvEvent_t event) {
  if (event != nullptr && event->last != nullptr) {
    clReleaseEvent(event->last); // a pending marker still completes: its queue holds it
  }
  delete event;
  return drvSuccess;
}

drvError_t drvEventRecord(drvEvent_t event, drvStream_t stream) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventRecord: null event");
  }
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  cl_event marker = nullptr;
  const drvError_t status = enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
    const drvError_t enqueued = checked(clEnqueueMarkerWithWaitList(queue, 0, nullptr, event), "clEnqueueMarkerWithWaitList");
    if (enqueued == drvSuccess) {
      marker = *event;
      clRetainEvent(marker); // the stream's reference and the event's
    }
    return enqueued;
  });
  if (marker != nullptr) { // kept even if the flush failed: it was enqueued
    std::lock_guard<std::mutex> lock(event->mutex);
    std::swap(event->last, marker);
  }
  const HeldEvent previous(marker);
  return status;
}

drvError_t drvEventQuery(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventQuery: null event");
  }
  const HeldEvent record(event->last_record());
  return record.event == nullptr ? drvSuccess : completion(record.event, "drvEventQuery: the recorded work failed");
}

drvError_t drvEventSynchronize(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventSynchronize: null event");
  }
  const HeldEvent record(event->last_record());
  if (record.event == nullptr) {
    return drvSuccess;
  }
  return checked(clWaitForEvents(1, &record.event), "clWaitForEvents");
}

drvError_t drvEventElapsedTime(float* ms, drvEvent_t start, drvEvent_t end) {
  if (ms == nullptr || start == nullptr || end == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventElapsedTime: null argument");
  }
  cl_ulong ends[2] = {0, 0};
  drvEvent_t events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    if ((events[i]->flags & DRV_EVENT_DISABLE_TIMING) != 0) {
      return fail(drvErrorInvalidHandle, "elapsed time needs events created with timing enabled");
    }
    const HeldEvent record(events[i]->last_record());
    if (record.event == nullptr) {
      return fail(drvErrorInvalidHandle, "elapsed time needs both events recorded first");
    }
    cl_int state = CL_QUEUED;
    clGetEventInfo(record.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr);
    if (state != CL_COMPLETE) {
      return fail(drvErrorNotReady, "an event's work has not completed yet");
    }
    if (cl_int status = clGetEventProfilingInfo(record.event, CL_PROFILING_COMMAND_END, sizeof ends[i], &ends[i], nullptr);
        status != CL_SUCCESS) {
      return fail_cl("clGetEventProfilingInfo", status);
    }
  }
  // Device clock nanoseconds; negative when `end` completed first, as CUDA's.
  *ms = static_cast<float>(static_cast<double>(static_cast<int64_t>(ends[1] - ends[0])) / 1e6);
  return drvSuccess;
}

} // extern "C"
