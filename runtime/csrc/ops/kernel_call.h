// KernelCall and OutputView: what a compute kernel of this backend uses to
// run an ATen CPU kernel (at::cpu::*) inline, on host views of its device
// tensors (memory_access.h), after waiting for the current stream. Kernels
// whose output shape is known before computing are launched on the stream
// instead (structured_ops.h, launch.h); KernelCall is for the rest (a
// data-dependent shape, an out= tensor that must be resized) and for the
// device checks' error messages. Two things make that less trivial than it looks, and
// both are handled here:
//
// 1. Device checks. The CPU kernel only sees CPU tensors, so it cannot tell
//    a tensor on device 1 from one on device 0, nor a host tensor from a
//    device tensor: without a check here, add(foo:0, foo:1) would silently
//    work and add(foo, cpu_matrix) would compute on the host tensor. A
//    KernelCall fixes the device of the call and turns every input into a
//    host view after checking it: tensors must be on that device, except
//    CPU 0-dim tensors (wrapped scalars, which TensorIterator ops accept on
//    any device, like CUDA does).
//
// 2. Output resizing. An out= tensor may arrive with the wrong shape (or
//    empty); the CPU kernel then resizes it. The host view of a device
//    tensor cannot grow in place -- its memory is the device allocation --
//    and any change the CPU kernel makes to the view's sizes would not
//    reach the device tensor. OutputView hands the CPU kernel a host view
//    whose storage *is* resizable (with the CPU allocator). commit() then
//    compares: if the storage pointer, sizes, strides and offset are
//    unchanged -- the common case, e.g. every call from PyTorch's structured
//    functional wrappers, which allocate the output with the right shape --
//    it does nothing else. Otherwise it replays the change on the device
//    tensor through the dispatcher (resize_ grows device memory, as_strided_
//    restrides) and, if the CPU kernel had to reallocate, copies the result
//    from the temporary host memory into device memory.
//
//   at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other,
//                       const at::Scalar& alpha, at::Tensor& out) {
//     const KernelCall call("add.out", out);
//     OutputView o = call.output(out);
//     at::cpu::add_out(o.host(), call.input(self, "self"), call.input(other, "other"), alpha);
//     return o.commit();
//   }
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include <ATen/core/ATen_fwd.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include "profiler.h"

namespace scaffold::runtime {

// A tensor of this backend (PrivateUse1), on any of its devices.
inline bool on_backend(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// A CPU 0-dim tensor: the one kind of host tensor a kernel accepts (a
// wrapped scalar, which TensorIterator ops take on any device).
inline bool is_cpu_scalar(const at::Tensor& t) {
  return t.dim() == 0 && t.device().is_cpu();
}

class OutputView;

// One call of a compute kernel: its name (for messages) and the device it
// runs on, taken from `anchor` -- the out= tensor, or self for in-place and
// functional kernels -- which must be a strided tensor of this backend.
class KernelCall {
 public:
  KernelCall(const char* op, const at::Tensor& anchor, const char* anchor_name = "out");

  const c10::Device& device() const {
    return device_;
  }

  // Host view of input `t` (named `arg` in messages); a CPU 0-dim tensor is
  // returned as is. Anything else off this call's device is an error.
  at::Tensor input(const at::Tensor& t, const char* arg) const;
  // Optional inputs (e.g. a loss weight): nullopt / undefined stay so.
  std::optional<at::Tensor> input(const std::optional<at::Tensor>& t, const char* arg) const;
  // Tensor lists (e.g. cat's inputs).
  std::vector<at::Tensor> inputs(const at::ITensorListRef& tensors, const char* arg) const;
  // Advanced-indexing indices. Index tensors may also be CPU tensors of any
  // shape, as for CUDA tensors (x[cpu_index] is valid PyTorch).
  c10::List<std::optional<at::Tensor>> indices(
      const c10::List<std::optional<at::Tensor>>& indices,
      const char* arg) const;

  // Host view of an input that must be on this call's device, for ops that
  // are not elementwise: there a CPU 0-dim tensor is no wrapped scalar but a
  // tensor on the wrong device, which CUDA rejects too (batch norm's weight,
  // layer norm's over an empty normalized shape).
  at::Tensor device_input(const at::Tensor& t, const char* arg) const;
  std::optional<at::Tensor> device_input(const std::optional<at::Tensor>& t, const char* arg) const;
  std::vector<at::Tensor> device_inputs(at::TensorList tensors, const char* arg) const;

  // Host view of a tensor modified in place (self of an in-place op). Its
  // shape never changes, so no commit is needed.
  at::Tensor inplace(const at::Tensor& self, const char* arg = "self") const;

  // A device copy of a result the CPU kernel allocated itself (a CPU kernel
  // with no out= variant: layer norm, the norms' backward), with its sizes
  // and strides; an undefined tensor (a gradient output_mask left out) stays
  // undefined. A kernel that can write device memory directly saves the copy.
  at::Tensor adopt(const at::Tensor& host_result) const;

  // An output: see OutputView.
  OutputView output(at::Tensor& out, const char* arg = "out") const;

  // The device check of device_input() without the host view, for an
  // operand the kernel hands to launched work (a view would wait for the
  // stream, which a capture refuses).
  void check_on_device(const at::Tensor& t, const char* arg) const;

 private:
  // The host view of an operand: on a written tensor's host storage when it
  // lies in the same device storage (written() below).
  at::Tensor view_of(const at::Tensor& t) const;
  // Remembers the host side of a tensor this call writes (output() or
  // inplace()). Host views of one device storage are separate CPU storages,
  // so without this the CPU kernel's overlap checks (ATen's
  // assert_no_overlap, TensorIterator's) would pass an input that overlaps
  // the output, which the CPU and CUDA refuse: inputs taken after it are
  // viewed on its host storage instead.
  void written(const at::Tensor& device_tensor, const at::Tensor& host) const;

  const char* op_;
  c10::Device device_;
  InlineKernelTiming timing_; // a kernel of its own in a profile
  // Each written tensor's device storage and host view (max.dim_max writes two).
  mutable c10::SmallVector<std::pair<const c10::StorageImpl*, at::Tensor>, 2> written_;
};

// The host side of an out= tensor; see the comment at the top of the file.
// Pass host() to the CPU kernel as its out argument, then return commit().
class OutputView {
 public:
  at::Tensor& host() {
    return host_;
  }

  // Makes the device tensor match what the CPU kernel produced and returns
  // it. Free when the output already had the right shape.
  at::Tensor& commit() {
    if (C10_LIKELY(unchanged())) {
      return device_;
    }
    return adopt_host_result();
  }

 private:
  friend class KernelCall;
  explicit OutputView(at::Tensor& device_out);

  bool unchanged() const;
  at::Tensor& adopt_host_result();

  at::Tensor& device_;
  at::Tensor host_;
  const void* host_data_; // host address of the device memory at creation
};

} // namespace scaffold::runtime
