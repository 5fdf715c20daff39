// The sanctioned way for kernels to touch device memory.
//
// Device pointers (tensor.data_ptr() on this device) are deliberately not
// dereferenceable: see allocator.h. Kernels translate them here and then
// work on ordinary host memory -- typically by running an ATen CPU kernel on
// host_view(tensor).
//
//   at::Tensor out = host_view(self);          // CPU tensor, same memory
//   at::add_out(out, host_view(a), host_view(b));
//
// host_view is cheap (no copy, no syscall, no dispatcher call): it builds a
// CPU TensorImpl over the translated storage base with the device tensor's
// sizes, strides and storage offset.
//
// On a device whose memory the host cannot address (a GPU, an NPU, OpenCL;
// the simulator with SCAFFOLD_DEVICE_MEMORY=discrete) there is no host view:
// these functions throw HostAccessUnavailable (host_access_error.h), and host
// code reaches device memory through the driver's copies and fills instead --
// the staging functions at the end of this file.
#pragma once

#include <cstddef>

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>

#include "host_access_error.h"

namespace scaffold::runtime {

// Host-view address for a device address (drvHostPointer), or nullptr when
// `device_ptr` is not device memory. Lock-free and syscall-free.
void* translate_device_address(const void* device_ptr) noexcept;

// Device holding `device_ptr`, or -1 when it is not device memory.
c10::DeviceIndex device_of_address(const void* device_ptr) noexcept;

// Host-view address of `device_ptr`, which may point anywhere inside a
// device allocation, once the work queued on its device's current stream
// has completed (host code is about to use it). Throws a clear error for a
// pointer that is not device memory of this runtime (null included).
void* host_address(const void* device_ptr);

// host_address without the wait, for work launched on the current stream
// (launch.h), which the stream itself orders after earlier work.
void* launch_host_address(const void* device_ptr);

// True when `ptr` lies in this runtime's device address range.
bool is_device_pointer(const void* ptr) noexcept;

// A CPU tensor aliasing `device_tensor`'s memory through the host view
// (waiting for the current stream first, as host_address does):
// same sizes, strides, storage offset and dtype; writes through it are
// writes to the device tensor. The view keeps the device storage alive.
// Checks: defined, strided, on this device, and (for non-empty storages)
// backed by this runtime's memory.
at::Tensor host_view(const at::Tensor& device_tensor);

// host_view without the wait, for work launched on the current stream
// (launch.h): the stream runs it after earlier work. Reading or writing
// through it from host code that is not launched is a race.
at::Tensor launch_host_view(const at::Tensor& device_tensor);

// Like host_view, but for an optional/undefined tensor: returns an undefined
// tensor when `device_tensor` is undefined.
at::Tensor host_view_or_undefined(const at::Tensor& device_tensor);

enum class CopyKind {
  HostToDevice,
  DeviceToHost,
  DeviceToDevice,
};

// ---- Host code without host views: staging through the driver --------------
//
// These work on every device, addressable or not. A staged tensor is a CPU
// tensor over a copy of the bytes a device tensor's elements span (from its
// first element to its last, gaps included), with the device tensor's sizes,
// strides, dtype and conj/neg bits.

// Elements from a tensor's first to its last, gaps included (strides are
// never negative in PyTorch); 0 for an empty tensor: what staging moves.
int64_t span_elements(const at::Tensor& t);

// A staged copy of `device_tensor` (waits for the current stream's work).
at::Tensor staged_copy(const at::Tensor& device_tensor);
// A staged tensor laid out as staged_copy's, its values not copied: for a
// result that host code writes in full (a non-overlapping, dense tensor).
at::Tensor staged_empty(const at::Tensor& device_tensor);
// Copies `staged` (staged_copy or staged_empty of `device_tensor`, written
// by host code; its layout unchanged) back into `device_tensor`'s bytes.
void write_back(const at::Tensor& staged, const at::Tensor& device_tensor);

// Fills `nbytes` of device memory at `dst` with copies of `pattern_size`
// bytes (drvMemFillAsync), enqueued on the current stream of its device.
void fill_bytes_async(void* dst, const void* pattern, size_t pattern_size, size_t nbytes);

// Copies `nbytes` between host memory and device memory through the
// driver, on the current stream of the device side (the destination's for
// device-to-device), and waits for it. Overlapping device ranges are handled.
void copy_bytes(void* dst, const void* src, size_t nbytes, CopyKind kind);

// The same copy, enqueued and not waited for; returns the stream it runs
// on. Host memory must stay valid (and unchanged) until that stream's work
// is done.
c10::Stream copy_bytes_async(void* dst, const void* src, size_t nbytes, CopyKind kind);

} // namespace scaffold::runtime
