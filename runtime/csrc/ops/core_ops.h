// The core ops: factories, views, resizing, copies and fills -- what a
// backend needs before any tensor can exist on its device and move between
// it and the host.
//
// They are device-name agnostic and written once, here; each backend's
// kernel files for these ops forward to them in one line (the signatures
// below are exactly the generated kernel declarations, native signatures
// without SymInts). Every function expects to be called through the
// dispatcher for a tensor of this backend (DeviceType::PrivateUse1), checks
// that first, and then leans on ATen's own device-generic helpers
// (at::detail::empty_generic, at::native::as_strided_tensorimpl, view,
// resize_impl_cpu_, ...) for the stride and bounds arithmetic. Device
// memory is only ever touched through memory_access.h.
#pragma once

#include <array>
#include <optional>
#include <tuple>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/core/Storage.h>

namespace scaffold::runtime {

// ---- Factories ---------------------------------------------------------------
// Allocate on `device` (or the current device when it has no index) with the
// runtime's caching allocator.
at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format);
at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory);
// A ZeroTensor: sizes and dtype, no memory (a null data pointer). Autograd
// hands these out for gradients it knows are zero (sgn, sign, ...); PyTorch's
// ZeroTensor dispatch key turns one into real zeros when an op needs values.
at::Tensor _efficientzerotensor(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory);

// ---- Views (share self's storage; no memory is touched) ----------------------
at::Tensor as_strided(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<int64_t> storage_offset);
at::Tensor view(const at::Tensor & self, at::IntArrayRef size);
at::Tensor _reshape_alias(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride);
at::Tensor unfold(const at::Tensor & self, int64_t dimension, int64_t size, int64_t step);
at::Tensor view_as_complex(const at::Tensor & self);
at::Tensor view_as_real(const at::Tensor & self);

// ---- Resizing and storage swapping -------------------------------------------
// Grows the storage on the tensor's own device when needed (contents kept).
const at::Tensor & resize_(const at::Tensor & self, at::IntArrayRef size, ::std::optional<at::MemoryFormat> memory_format);
at::Tensor & set_(at::Tensor & self);
at::Tensor & set_(at::Tensor & self, at::Storage source);
at::Tensor & set_(at::Tensor & self, at::Storage source, int64_t storage_offset, at::IntArrayRef size, at::IntArrayRef stride);
at::Tensor & set_(at::Tensor & self, const at::Tensor & source);

// ---- Copies ---------------------------------------------------------------------
// Copies `self` into `dst` (returns dst): host <-> device and device <->
// device (also between two devices), with dtype conversion, broadcasting
// and arbitrary strides on either side. Copies between devices, and copies
// from or to pinned host memory with non_blocking=True, are enqueued on the
// current stream, as in CUDA; other copies with the host wait.
at::Tensor _copy_from(const at::Tensor & self, const at::Tensor & dst, bool non_blocking);
// Resizes `dst` to self's shape, then copies (the CPU fallback's way of
// writing results back into out= arguments).
at::Tensor _copy_from_and_resize(const at::Tensor & self, const at::Tensor & dst);
// tensor.item(): the single element, read through the host view.
at::Scalar _local_scalar_dense(const at::Tensor & self);

// ---- Fills ------------------------------------------------------------------------
at::Tensor & fill_(at::Tensor & self, const at::Scalar & value);
at::Tensor & zero_(at::Tensor & self);

// ---- Convolutions (convolution_ops.cpp) ---------------------------------------------
// at::_convolution and at::convolution_backward send every tensor of an
// out-of-tree backend to these two; their default kernels only raise, so
// without them no CNN runs. Computed by the CPU's own convolutions (mkldnn,
// slow_conv2d, ...) on host views, results copied to the device.
at::Tensor convolution_overrideable(const at::Tensor & input, const at::Tensor & weight, const ::std::optional<at::Tensor> & bias, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups);
::std::tuple<at::Tensor,at::Tensor,at::Tensor> convolution_backward_overrideable(const at::Tensor & grad_output, const at::Tensor & input, const at::Tensor & weight, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups, ::std::array<bool,3> output_mask);

} // namespace scaffold::runtime
