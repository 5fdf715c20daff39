// Launching OpenCL C from a kernel file: the PyTorch side of the OpenCL
// driver's kernels (opencl_ops.h), and what a team's own kernels build on.
//
// A kernel asks the driver for the SDK's objects behind its own
// (scaffold_driver.h's native handles): the current stream's command queue,
// the device's context, and for each tensor the cl_mem holding its data with
// the byte offset of its first element. Device code is OpenCL C, built once
// per device and source text (program cache) and enqueued on the stream's
// queue, so it is ordered with everything else on the stream.
//
// Each operand's element type is described to the device code by macros
// (element_macros): its storage type, and how one element is loaded into the
// type the kernel computes in and stored back. Half and bfloat16 compute in
// float as ATen's opmath does; bfloat16 is stored as ushort.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

namespace scaffold::opencl_ops {

// Tensors of more dimensions than this (after TensorIterator coalesced
// them) are declined to the copying fallback.
constexpr int kMaxDims = 8;

// The OpenCL C type a kernel computes `type` in: ATen's opmath type (half
// and bfloat16 in float, bool in uchar).
const char* compute_type_name(at::ScalarType type);
at::ScalarType compute_type(at::ScalarType type);

// Declines (decline_kernel: the op runs through the copying fallback) what
// the device code of `op` does not cover: complex and quantized dtypes,
// and float64 on a device without cl_khr_fp64.
void check_dtype(const char* op, at::ScalarType type, c10::DeviceIndex device);

// `#define`s describing operand `tag` of dtype `type` to device code that
// computes in `compute` (an OpenCL C type name): TAG_T, the storage type;
// LOAD_TAG(p), one element at p (a __global const TAG_T*) as `compute`;
// STORE_TAG(p, v), the value v stored at p.
std::string element_macros(const std::string& tag, at::ScalarType type, const char* compute);

// The OpenCL C every program starts with: fp64 enabled where the device has
// it, and the bfloat16 conversions.
std::string program_prelude(c10::DeviceIndex device);

// A kernel of the program built from `source` for `device`, with its
// arguments set one by one and enqueued on the device's current stream.
// Programs are built once per device and source; a failed build throws with
// the compiler's log.
class Launch {
 public:
  Launch(c10::DeviceIndex device, const std::string& source, const char* kernel_name);
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // A tensor: two arguments, its cl_mem (`__global T* base`) and the byte
  // offset of its first element (`ulong offset`). An undefined tensor passes
  // a null buffer.
  Launch& tensor(const at::Tensor& tensor);
  // A device pointer: the same two arguments.
  Launch& pointer(const void* device_ptr);
  Launch& i32(int32_t value);
  Launch& i64(int64_t value);
  // Up to kMaxDims values as one long8 (the rest zero).
  Launch& dims(c10::ArrayRef<int64_t> values);
  // `value` in the compute type `type` (compute_type): one argument of that
  // OpenCL C type.
  Launch& scalar(const c10::Scalar& value, at::ScalarType type);

  // Enqueues `work_items` work items (nothing for zero) and flushes the queue.
  void run(int64_t work_items);

 private:
  Launch& raw(size_t size, const void* value);
  // One argument of OpenCL type T (cl_int, cl_float, ...).
  template <class T>
  Launch& by_value(T value) {
    return raw(sizeof(T), &value);
  }

  c10::DeviceIndex device_;
  cl_kernel kernel_ = nullptr;
  cl_uint next_argument_ = 0;
  const char* name_;
};

} // namespace scaffold::opencl_ops
