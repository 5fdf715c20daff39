// Internals shared by the OpenCL driver's files (not part of the API).
//
// The driver implements scaffold_driver.h on any OpenCL 1.2 implementation,
// through the ICD loader (libOpenCL; driver.cmake links it):
//   devices       -> the GPU, CPU and accelerator devices of one platform,
//                    all in one cl_context (opencl_devices.cpp)
//   device memory -> one cl_mem buffer per allocation, named by an address
//                    in a range reserved PROT_NONE (opencl_memory.cpp)
//   streams       -> in-order command queues; host functions run on the
//                    stream's own thread between a marker and a barrier
//                    (opencl_streams.cpp)
//   copies, fills -> clEnqueue{Write,Read,Copy,Fill}Buffer (opencl_copies.cpp)
//   events        -> markers, waited for by barriers (opencl_events.cpp)
//   graphs, activity tracing, testing hooks -> drvErrorNotSupported
//                    (opencl_unsupported.cpp)
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scaffold_driver.h"

namespace scaffold::opencl {

struct Device {
  cl_device_id id = nullptr;
  std::string name;
  uint64_t global_memory = 0; // CL_DEVICE_GLOBAL_MEM_SIZE: what drvMalloc hands out at most
  uint64_t max_allocation = 0; // CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest buffer
  int compute_units = 1;
  int version_major = 1; // CL_DEVICE_VERSION's "OpenCL <major>.<minor>"
  int version_minor = 2;
};

// The platform's devices, found once. One context holds them all: a stream
// of one device can then wait for an event recorded on another's
// (clEnqueueBarrierWithWaitList needs both in one context), and a
// device-to-device copy between two devices is one clEnqueueCopyBuffer.
struct Platform {
  cl_context context = nullptr;
  std::vector<Device> devices;
  bool launch_blocking = false; // SCAFFOLD_LAUNCH_BLOCKING
};

// Records `message` as the calling thread's last error detail and returns
// `error` (for `return fail(...)`).
drvError_t fail(drvError_t error, std::string message);
// The OpenCL call `call` returned `code`: its message names both
// ("clEnqueueReadBuffer: CL_INVALID_VALUE (-30)").
drvError_t fail_cl(const char* call, cl_int code);
// drvSuccess for CL_SUCCESS, else fail_cl(call, status).
drvError_t checked(cl_int status, const char* call);

// The platform, discovered at the first call: drvErrorConfiguration when
// SCAFFOLD_* variables are malformed or OpenCL fails. With no OpenCL
// platform it holds no devices.
drvError_t platform(const Platform** out);
drvError_t check_device(int device);
int current_device();

// Releases a retained event when it goes.
struct HeldEvent {
  cl_event event = nullptr;

  explicit HeldEvent(cl_event e) : event(e) {}
  HeldEvent(const HeldEvent&) = delete;
  HeldEvent& operator=(const HeldEvent&) = delete;
  ~HeldEvent() {
    if (event != nullptr) {
      clReleaseEvent(event);
    }
  }
};

// drvErrorForkedProcess in a child forked after the context was created:
// OpenCL's threads did not survive the fork.
drvError_t check_not_forked();

// Memory (opencl_memory.cpp). The buffer holding [ptr, ptr + size) and the
// offset of ptr in it, retained until the Resolved goes: a concurrent
// drvFree cannot pull the buffer from under a command being enqueued.
struct Resolved {
  cl_mem memory = nullptr;
  size_t offset = 0;

  Resolved() = default;
  Resolved(const Resolved&) = delete;
  Resolved& operator=(const Resolved&) = delete;
  ~Resolved() {
    if (memory != nullptr) {
      clReleaseMemObject(memory);
    }
  }
};
drvError_t resolve(const void* ptr, size_t size, const char* what, Resolved* out);

// Streams (opencl_streams.cpp). A null stream is the current device's
// default.
drvError_t resolve_stream(drvStream_t* stream);
// Runs `command(queue, &event)`, which enqueues on the stream's queue and
// leaves the event of its last command in `event`; that event becomes the
// stream's last (what drvStreamQuery reads). Then the queue is flushed, or
// finished when launches block.
drvError_t enqueue(drvStream_t stream, const std::function<drvError_t(cl_command_queue queue, cl_event* event)>& command);
// drvSuccess once `event` completed, drvErrorNotReady before; `failed`
// names the work when it failed.
drvError_t completion(cl_event event, const char* failed);
// Waits for every stream of `device`.
drvError_t synchronize_device(int device);
// True on a stream's host-function thread while it runs a host function,
// which must not wait for its own stream (the stream waits for it).
bool in_host_function() noexcept;

} // namespace scaffold::opencl
