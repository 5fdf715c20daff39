#include "core_ops.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/fill_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/zero_cpu_dispatch.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "allocator.h"
#include "device.h"
#include "host_allocator.h"
#include "launch.h"
#include "memory_access.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

bool on_device(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// Every core op is registered for this backend only, but may still be
// called with a tensor that is not ours (e.g. directly from C++).
void check_device_tensor(const at::Tensor& t, const char* op, const char* arg) {
  TORCH_CHECK(t.defined(), op, ": argument '", arg, "' is an undefined tensor");
  TORCH_CHECK(
      on_device(t),
      op,
      ": expected argument '",
      arg,
      "' to be a ",
      c10::get_privateuse1_backend(),
      " tensor, got a tensor on ",
      t.device());
  TORCH_CHECK(
      t.layout() == c10::kStrided,
      op,
      ": only strided ",
      c10::get_privateuse1_backend(),
      " tensors are supported, got layout ",
      t.layout());
}

void check_factory_args(
    const char* op,
    std::optional<at::Layout> layout,
    std::optional<at::Device> device,
    std::optional<bool> pin_memory) {
  // (Messages are only built on failure: this runs for every allocation.)
  TORCH_CHECK(
      !device.has_value() || device->type() == c10::DeviceType::PrivateUse1,
      op,
      ": the ",
      c10::get_privateuse1_backend(),
      " kernel cannot create a tensor on ",
      *device);
  TORCH_CHECK(
      layout.value_or(c10::kStrided) == c10::kStrided,
      op,
      ": ",
      c10::get_privateuse1_backend(),
      " supports strided tensors only, got layout ",
      *layout);
  TORCH_CHECK(
      !pin_memory.value_or(false),
      op,
      ": only CPU tensors can be pinned, not ",
      c10::get_privateuse1_backend(),
      " tensors");
}

c10::DispatchKeySet device_key_set() {
  // The TensorImpl constructor adds the matching autograd and
  // ADInplaceOrView keys, as for CUDA's DispatchKey::CUDA.
  return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

// Makes `self`'s storage hold at least `nbytes`, growing it on its own
// device (contents kept) through the PrivateUse1 hooks -- the device
// counterpart of ATen's maybe_resize_storage_cpu, whose memcpy would fault
// on device pointers.
void maybe_grow_storage(at::TensorImpl* self, size_t nbytes) {
  // A tensor without elements needs no memory; as on CPU, never resize for
  // it (a positive storage offset would otherwise demand bytes for nothing).
  if (self->numel() == 0) {
    return;
  }
  const c10::Storage& storage = self->unsafe_storage();
  TORCH_INTERNAL_ASSERT(storage, "a ", c10::get_privateuse1_backend(), " tensor without storage");
  if (nbytes > storage.nbytes()) {
    at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(storage, nbytes);
  }
}

size_t storage_nbytes_needed(const at::TensorImpl* self) {
  return at::detail::computeStorageNbytes(
      self->sizes(), self->strides(), self->dtype().itemsize(), self->storage_offset());
}

CopyKind copy_kind(const at::Tensor& src, const at::Tensor& dst) {
  if (on_device(src)) {
    return on_device(dst) ? CopyKind::DeviceToDevice : CopyKind::DeviceToHost;
  }
  return CopyKind::HostToDevice;
}

// True when `src` and `dst` lay out the same bytes in the same order over
// one dense block each, so the copy is a single memcpy.
bool is_bytewise_copy(const at::Tensor& src, const at::Tensor& dst) {
  return src.dtype() == dst.dtype() && src.sizes() == dst.sizes() &&
      src.strides() == dst.strides() && src.is_conj() == dst.is_conj() &&
      src.is_neg() == dst.is_neg() && dst.is_non_overlapping_and_dense();
}

// As in CUDA: a copy between devices is asynchronous with respect to the
// host (ordered on the current stream), and so is a copy from or to pinned
// host memory with non_blocking=True (the pinned block is kept from reuse
// until the copy is done; the caller synchronises -- an event, the stream --
// before reading a device-to-host result). A copy with pageable host memory
// completes before returning.
void enqueue_bytewise_copy(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  const CopyKind kind = copy_kind(src, dst);
  const at::Tensor& host_side = kind == CopyKind::HostToDevice ? src : dst;
  const bool pinned = kind != CopyKind::DeviceToDevice && non_blocking &&
      is_pinned_pointer(host_side.storage().data_ptr().get());
  const c10::Stream stream = copy_bytes_async(
      dst.data_ptr(), src.data_ptr(), dst.numel() * dst.itemsize(), kind);
  if (kind == CopyKind::DeviceToDevice) {
    return;
  }
  if (!pinned) {
    synchronize_stream(stream);
    return;
  }
  const c10::DataPtr& host_data = host_side.storage().data_ptr();
  pinned_host_allocator()->record_event(host_data.get(), host_data.get_context(), stream);
}

} // namespace

// ---- Factories ---------------------------------------------------------------

at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format) {
  check_factory_args("empty", layout, device, pin_memory);
  // The allocator allocates on the current device.
  const c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_generic(
      size,
      device_allocator(),
      device_key_set(),
      c10::dtype_or_default(dtype),
      memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  check_factory_args("empty_strided", layout, device, pin_memory);
  const c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_strided_generic(
      size, stride, device_allocator(), device_key_set(), c10::dtype_or_default(dtype));
}

at::Tensor _efficientzerotensor(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  check_factory_args("_efficientzerotensor", layout, device, pin_memory);
  const c10::OptionalDeviceGuard guard(device);
  // As CUDA's: ATen's ZeroTensorAllocator gives a null data pointer on the
  // (current) device, and the ZeroTensor key routes every op on the tensor
  // through PyTorch's ZeroTensor handling before it could reach a kernel.
  at::native::ZeroTensorAllocator allocator(c10::Device(c10::DeviceType::PrivateUse1, current_device()));
  return at::detail::empty_generic(
      size,
      &allocator,
      device_key_set() | c10::DispatchKeySet(c10::DispatchKey::ZeroTensor),
      c10::dtype_or_default(dtype),
      std::nullopt);
}

// ---- Views -------------------------------------------------------------------------

at::Tensor as_strided(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<int64_t> storage_offset) {
  check_device_tensor(self, "as_strided", "self");
  // Checks sizes/strides/offset against the storage, keeps self's key set.
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {
  check_device_tensor(self, "view", "self");
  return at::native::view(self, size);
}

at::Tensor _reshape_alias(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride) {
  check_device_tensor(self, "_reshape_alias", "self");
  return at::native::_reshape_alias(self, size, stride);
}

at::Tensor unfold(const at::Tensor & self, int64_t dimension, int64_t size, int64_t step) {
  check_device_tensor(self, "unfold", "self");
  return at::native::unfold(self, dimension, size, step);
}

at::Tensor view_as_complex(const at::Tensor & self) {
  check_device_tensor(self, "view_as_complex", "self");
  return at::native::view_as_complex(self);
}

at::Tensor view_as_real(const at::Tensor & self) {
  check_device_tensor(self, "view_as_real", "self");
  return at::native::view_as_real(self);
}

// ---- Resizing and storage swapping -------------------------------------------

const at::Tensor & resize_(const at::Tensor & self, at::IntArrayRef size, ::std::optional<at::MemoryFormat> memory_format) {
  check_device_tensor(self, "resize_", "self");
  at::detail::check_size_nonnegative(size);
  if (memory_format.has_value()) {
    TORCH_CHECK(
        *memory_format != at::MemoryFormat::Preserve,
        "Unsupported memory format ",
        *memory_format);
  }
  at::TensorImpl* impl = self.unsafeGetTensorImpl();
  // Sizes and contiguous strides only (a no-op when the sizes match, as on
  // CPU); the storage is grown on the device below.
  at::native::resize_impl_cpu_(impl, size, /*stride=*/std::nullopt, /*resize_storage=*/false);
  maybe_grow_storage(impl, storage_nbytes_needed(impl));
  if (memory_format.has_value()) {
    impl->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor & set_(at::Tensor & self) {
  check_device_tensor(self, "set_", "self");
  // An empty, resizable storage on self's device.
  c10::Storage storage(
      c10::Storage::use_byte_size_t(),
      0,
      allocate_on_device(self.device().index(), 0),
      device_allocator(),
      /*resizable=*/true);
  return set_(self, std::move(storage), 0, {0}, {});
}

at::Tensor & set_(at::Tensor & self, at::Storage source) {
  check_device_tensor(self, "set_", "self");
  // Generic: a 1-D view of the whole storage, via set_.source_Storage_storage_offset.
  return at::native::set_(self, std::move(source));
}

at::Tensor & set_(at::Tensor & self, at::Storage source, int64_t storage_offset, at::IntArrayRef size, at::IntArrayRef stride) {
  check_device_tensor(self, "set_", "self");
  TORCH_CHECK(source, "set_: got an undefined storage");
  TORCH_CHECK(
      source.device_type() == c10::DeviceType::PrivateUse1,
      "set_: cannot set the storage of a ",
      c10::get_privateuse1_backend(),
      " tensor to a storage on ",
      source.device());
  // As set_storage_cpu_: validate (offset, bounds when the shape is
  // unchanged, same device), swap the storage, then restride. The storage
  // is grown (on the device) if the new shape needs more of it.
  at::native::checkSetStorage(self, std::move(source), storage_offset, size, stride);
  at::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(storage_offset);
  const at::OptionalIntArrayRef stride_opt =
      stride.data() != nullptr ? at::OptionalIntArrayRef(stride) : std::nullopt;
  at::native::resize_impl_cpu_(impl, size, stride_opt, /*resize_storage=*/false);
  maybe_grow_storage(impl, storage_nbytes_needed(impl));
  return self;
}

at::Tensor & set_(at::Tensor & self, const at::Tensor & source) {
  check_device_tensor(self, "set_", "self");
  check_device_tensor(source, "set_", "source");
  return at::native::set_tensor_(self, source);
}

// ---- Copies ------------------------------------------------------------------------

namespace {

// A copy within one device that the CPU copy cannot refuse or warn about once
// launched: self expandable to dst, no overlap between them or within dst
// that the CPU's checks would find, self not complex (a complex-to-real cast
// warns), neither carrying conj/neg bits. Casts are launched too: autocast
// casts every weight once per step.
//
// "Too hard to tell" passes, as it does the CPU's copy (it refuses only an
// overlap it can prove): it is the answer for every strided view, e.g. the
// slice of a zero tensor that select_backward and slice_backward copy a
// gradient into. Run inline, each such copy drained the stream from the
// backward pass (a ViT's class token, a rotary embedding's halves).
bool launches_as_device_copy(const at::Tensor& self, const at::Tensor& dst) {
  if (!on_device(self) || !on_device(dst) || self.device() != dst.device() ||
      self.is_complex() || self.is_conj() || self.is_neg() ||
      dst.is_conj() || dst.is_neg() || !at::is_expandable_to(self.sizes(), dst.sizes())) {
    return false;
  }
  const at::MemOverlapStatus between = at::get_overlap_status(dst, self);
  return at::has_internal_overlap(dst) != at::MemOverlap::Yes &&
      (between == at::MemOverlapStatus::No || between == at::MemOverlapStatus::TooHard);
}

// A copy that is not one block of bytes, on a device whose memory the host
// cannot address: ATen's CPU copy between staged tensors (memory_access.h),
// the device side(s) copied in through the driver and the destination copied
// back. A dense destination is written in full, so its old bytes are not
// read first.
void staged_copy_from(const at::Tensor& self, const at::Tensor& dst) {
  const at::Tensor host_src = on_device(self) ? staged_copy(self) : self;
  if (!on_device(dst)) {
    at::native::copy_(const_cast<at::Tensor&>(dst), host_src, /*non_blocking=*/false);
    return;
  }
  at::Tensor host_dst = dst.is_non_overlapping_and_dense() ? staged_empty(dst) : staged_copy(dst);
  at::native::copy_(host_dst, host_src, /*non_blocking=*/false);
  write_back(host_dst, dst);
}

// The bytes of `value` as `t`'s dtype stores it (conj/neg bits applied),
// for drvMemFillAsync; nullopt where a fill is not a repeated pattern.
std::optional<at::Tensor> stored_fill_value(const at::Tensor& t, const at::Scalar& value) {
  if (!t.is_non_overlapping_and_dense() || t.itemsize() > 16) {
    return std::nullopt;
  }
  at::Tensor element = at::empty({1}, at::TensorOptions().dtype(t.dtype()));
  at::Tensor as_stored = element;
  as_stored._set_conj(t.is_conj());
  as_stored._set_neg(t.is_neg());
  at::cpu::fill_(as_stored, value); // a conj/neg tensor stores the conjugate/negation
  return element;
}

// Fills a tensor on a device whose memory the host cannot address: a dense
// one with the driver's pattern fill (enqueued, as a kernel), any other
// through a staged copy.
void fill_without_host_access(at::Tensor& self, const at::Scalar& value) {
  if (const std::optional<at::Tensor> pattern = stored_fill_value(self, value)) {
    fill_bytes_async(self.data_ptr(), pattern->const_data_ptr(), self.itemsize(), self.numel() * self.itemsize());
    return;
  }
  at::Tensor host = staged_copy(self);
  at::cpu::fill_(host, value);
  write_back(host, self);
}

} // namespace

at::Tensor _copy_from(const at::Tensor & self, const at::Tensor & dst, bool non_blocking) {
  TORCH_CHECK(self.defined() && dst.defined(), "_copy_from: got an undefined tensor");
  TORCH_CHECK(
      on_device(self) || on_device(dst),
      "_copy_from: neither tensor is on ",
      c10::get_privateuse1_backend(),
      " (", self.device(), " -> ", dst.device(), ")");
  for (const at::Tensor* t : {&self, &dst}) {
    TORCH_CHECK(
        on_device(*t) || t->device().is_cpu(),
        "_copy_from: ",
        c10::get_privateuse1_backend(),
        " copies to and from the CPU and ",
        c10::get_privateuse1_backend(),
        " devices only, got a tensor on ",
        t->device());
    TORCH_CHECK(
        t->layout() == c10::kStrided,
        "_copy_from: only strided tensors can be copied to or from ",
        c10::get_privateuse1_backend(),
        ", got layout ",
        t->layout());
  }
  if (dst.numel() == 0) {
    return dst;
  }
  if (on_device(self) && on_device(dst)) {
    // Refused as by the CPU's and CUDA's copy, also where a byte copy could
    // do it (as memmove): a written-to tensor overlapping itself or its source.
    at::assert_no_internal_overlap(dst);
    at::assert_no_partial_overlap(dst, self);
  }
  if (is_bytewise_copy(self, dst)) {
    enqueue_bytewise_copy(self, dst, non_blocking);
    return dst;
  }
  if (device_memory_is_host_addressable() && launches_as_device_copy(self, dst)) {
    // A strided copy or a cast within one device (a permuted tensor made
    // contiguous, a weight cast by autocast): ATen's CPU copy between host
    // views, launched.
    // Run inline, it would wait for all the work before it -- an attention
    // layer's transposes would drain the stream once each.
    launch(dst.device().index(), "copy_", [host_dst = launch_host_view(dst), host_src = launch_host_view(self)]() mutable {
      at::native::copy_(host_dst, host_src, /*non_blocking=*/false);
    });
    return dst;
  }
  if (!device_memory_is_host_addressable()) {
    staged_copy_from(self, dst);
    return dst;
  }
  // Anything else -- host memory on one side, complex values,
  // conj/neg bits, what the CPU copy refuses -- is ATen's CPU copy between
  // host views, inline: it raises at the call and reads host memory now.
  at::Tensor host_dst = on_device(dst) ? host_view(dst) : dst;
  const at::Tensor host_src = on_device(self) ? host_view(self) : self;
  at::native::copy_(host_dst, host_src, non_blocking);
  return dst;
}

at::Tensor _copy_from_and_resize(const at::Tensor & self, const at::Tensor & dst) {
  TORCH_CHECK(self.defined() && dst.defined(), "_copy_from_and_resize: got an undefined tensor");
  TORCH_CHECK(
      on_device(self) || on_device(dst),
      "_copy_from_and_resize: neither tensor is on ",
      c10::get_privateuse1_backend());
  if (dst.sizes() != self.sizes()) {
    dst.resize_(self.sizes()); // through the dispatcher: grows device storage
  }
  return scaffold::runtime::_copy_from(self, dst, /*non_blocking=*/false);
}

at::Scalar _local_scalar_dense(const at::Tensor & self) {
  check_device_tensor(self, "_local_scalar_dense", "self");
  TORCH_CHECK(
      self.numel() == 1,
      "a Tensor with ",
      self.numel(),
      " elements cannot be converted to Scalar");
  return at::native::_local_scalar_dense_cpu(device_memory_is_host_addressable() ? host_view(self) : staged_copy(self));
}

// ---- Fills -------------------------------------------------------------------------

// Fills are launched on the current stream (launch.h): they cannot fail once
// the tensor is known to be ours (ATen's fill accepts overlapping memory).
at::Tensor & fill_(at::Tensor & self, const at::Scalar & value) {
  check_device_tensor(self, "fill_", "self");
  if (self.numel() == 0) {
    return self;
  }
  if (!device_memory_is_host_addressable()) {
    fill_without_host_access(self, value);
    return self;
  }
  launch(self.device().index(), "fill_", [host = launch_host_view(self), value]() mutable {
    at::cpu::fill_(host, value);
  });
  return self;
}

at::Tensor & zero_(at::Tensor & self) {
  check_device_tensor(self, "zero_", "self");
  if (self.numel() == 0) {
    return self;
  }
  if (!device_memory_is_host_addressable()) {
    fill_without_host_access(self, 0);
    return self;
  }
  launch(self.device().index(), "zero_", [host = launch_host_view(self)]() mutable { at::cpu::zero_(host); });
  return self;
}

} // namespace scaffold::runtime

// Lazily conjugated / negated tensors (x.conj(), its .imag) carry the
// Conjugate / Negative dispatch keys, whose boxed fallback materializes
// such inputs with clone() before calling the op. For _copy_from that
// clone is itself a copy_ into this device, i.e. _copy_from again with the
// same lazy input: infinite recursion. Our _copy_from resolves the bits
// itself (host views keep them and the CPU copy applies them), so let the
// op fall through these keys, as ATen does for copy_.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

// Tensor.record_stream(stream): ATen has no device-generic kernel for it
// (CUDA registers its own).
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("record_stream", [](at::Tensor& self, c10::Stream stream) {
    TORCH_CHECK(
        stream.device_type() == c10::DeviceType::PrivateUse1,
        "record_stream: expected a ",
        c10::get_privateuse1_backend(),
        " stream, got one of ",
        stream.device());
    scaffold::runtime::record_stream(self.storage().data_ptr(), stream);
  });
}
