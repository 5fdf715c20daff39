// The OpenCL driver: copies, memsets and fills, enqueued on streams.
//
// Host-to-device and device-to-host copies are clEnqueueWriteBuffer and
// clEnqueueReadBuffer, device-to-device ones clEnqueueCopyBuffer (between
// two devices too: one context holds them all), memsets and pattern fills
// clEnqueueFillBuffer. None blocks the host: drvMemcpy and drvMemset
// enqueue on the current device's default stream and wait for it.
#include <string>

#include "opencl_driver.h"

namespace scaffold::opencl {
namespace {

bool overlaps(size_t a, size_t b, size_t size) {
  return a < b + size && b < a + size;
}

drvError_t copy_device_to_device(void* dst, const void* src, size_t size, drvStream_t stream) {
  Resolved from;
  Resolved to;
  if (drvError_t status = resolve(src, size, "drvMemcpyAsync (device-to-device source)", &from); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(dst, size, "drvMemcpyAsync (device-to-device destination)", &to); status != drvSuccess) {
    return status;
  }
  if (from.memory != to.memory || !overlaps(from.offset, to.offset, size)) {
    return enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
      return checked(
          clEnqueueCopyBuffer(queue, from.memory, to.memory, from.offset, to.offset, size, 0, nullptr, event),
          "clEnqueueCopyBuffer");
    });
  }
  if (from.offset == to.offset) {
    return drvSuccess; // a copy onto itself
  }
  // clEnqueueCopyBuffer refuses overlapping ranges of one buffer
  // (CL_MEM_COPY_OVERLAP); the contract is memmove's: through a temporary
  // buffer, which OpenCL frees once both copies have run.
  const Platform* p = nullptr;
  platform(&p);
  cl_int created = CL_SUCCESS;
  cl_mem staging = clCreateBuffer(p->context, CL_MEM_READ_WRITE, size, nullptr, &created);
  if (created != CL_SUCCESS) {
    return fail_cl("clCreateBuffer (staging an overlapping copy)", created);
  }
  const drvError_t status = enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
    if (drvError_t first = checked(
            clEnqueueCopyBuffer(queue, from.memory, staging, from.offset, 0, size, 0, nullptr, nullptr),
            "clEnqueueCopyBuffer");
        first != drvSuccess) {
      return first;
    }
    return checked(
        clEnqueueCopyBuffer(queue, staging, to.memory, 0, to.offset, size, 0, nullptr, event), "clEnqueueCopyBuffer");
  });
  clReleaseMemObject(staging);
  return status;
}

drvError_t fill(void* device_ptr, const void* pattern, size_t pattern_size, size_t size, drvStream_t stream, const char* what) {
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess || size == 0) {
    return status;
  }
  Resolved target;
  if (drvError_t status = resolve(device_ptr, size, what, &target); status != drvSuccess) {
    return status;
  }
  return enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
    return checked(
        clEnqueueFillBuffer(queue, target.memory, pattern, pattern_size, target.offset, size, 0, nullptr, event),
        "clEnqueueFillBuffer");
  });
}

} // namespace
} // namespace scaffold::opencl

using namespace scaffold::opencl;

extern "C" {

drvError_t drvMemcpyAsync(void* dst, const void* src, size_t size, drvMemcpyKind kind, drvStream_t stream) {
  if (drvError_t status = resolve_stream(&stream); status != drvSuccess) {
    return status;
  }
  if (size == 0) {
    return drvSuccess;
  }
  if (dst == nullptr || src == nullptr) {
    return fail(drvErrorInvalidValue, "drvMemcpyAsync: null pointer");
  }
  switch (kind) {
    case drvMemcpyHostToDevice: {
      Resolved to;
      if (drvError_t status = resolve(dst, size, "drvMemcpyAsync (host-to-device destination)", &to); status != drvSuccess) {
        return status;
      }
      return enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
        return checked(
            clEnqueueWriteBuffer(queue, to.memory, CL_FALSE, to.offset, size, src, 0, nullptr, event),
            "clEnqueueWriteBuffer");
      });
    }
    case drvMemcpyDeviceToHost: {
      Resolved from;
      if (drvError_t status = resolve(src, size, "drvMemcpyAsync (device-to-host source)", &from); status != drvSuccess) {
        return status;
      }
      return enqueue(stream, [&](cl_command_queue queue, cl_event* event) {
        return checked(
            clEnqueueReadBuffer(queue, from.memory, CL_FALSE, from.offset, size, dst, 0, nullptr, event),
            "clEnqueueReadBuffer");
      });
    }
    case drvMemcpyDeviceToDevice:
      return copy_device_to_device(dst, src, size, stream);
  }
  return fail(drvErrorInvalidValue, "drvMemcpyAsync: unknown copy kind " + std::to_string(static_cast<int>(kind)));
}

drvError_t drvMemcpy(void* dst, const void* src, size_t size, drvMemcpyKind kind) {
  // On the current device's default stream: after its work, as cudaMemcpy.
  if (drvError_t status = drvMemcpyAsync(dst, src, size, kind, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvMemsetAsync(void* device_ptr, int value, size_t size, drvStream_t stream) {
  const auto byte = static_cast<unsigned char>(value);
  return fill(device_ptr, &byte, 1, size, stream, "drvMemsetAsync");
}

drvError_t drvMemset(void* device_ptr, int value, size_t size) {
  if (drvError_t status = drvMemsetAsync(device_ptr, value, size, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvMemFillAsync(void* device_ptr, const void* pattern, size_t pattern_size, size_t size, drvStream_t stream) {
  if (pattern == nullptr || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8 && pattern_size != 16)) {
    return fail(drvErrorInvalidValue, "drvMemFillAsync: the pattern must be 1, 2, 4, 8 or 16 bytes");
  }
  if (size % pattern_size != 0 || reinterpret_cast<uintptr_t>(device_ptr) % pattern_size != 0) {
    return fail(drvErrorInvalidValue, "drvMemFillAsync: the address and size must be multiples of the pattern's size");
  }
  // (Allocations start on a page, so an aligned address has an aligned
  // offset in its buffer, as clEnqueueFillBuffer requires.)
  return fill(device_ptr, pattern, pattern_size, size, stream, "drvMemFillAsync");
}

} // extern "C"
