// Foreach ops (torch._foreach_*, what optimizers call with foreach=True) and
// the fused optimizers: one launch for whole lists of tensors.
//
// PyTorch's default kernels of the foreach ops loop over their lists, one
// dispatched op per tensor: a step over a model's N parameters costs N
// launches per foreach op. CUDA's kernels take the lists at once when they
// can -- "the fast route": every tensor on one device, the i-th tensors of
// all lists of one dtype, sizes and strides (but in dimensions of size 1),
// non-overlapping and dense --
// and loop otherwise. ForeachLists decides the same here. When fast(), the
// kernel launches one piece of work that runs the CPU's own foreach kernel
// (at::native::foreach_tensor_*_slow) on host views of the lists; otherwise
// it calls that same kernel on the device tensors: the loop, whose per-tensor
// ops on this backend raise PyTorch's own errors (tensors on two devices,
// lists of different lengths, a dtype an op cannot write).
//
//   void _foreach_add_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
//     ForeachLists lists({self, other});
//     if (!lists.fast() || alpha.isComplex()) {
//       return at::native::foreach_tensor_add_list_kernel_slow_(self, other, alpha);
//     }
//     lists.launch("_foreach_add_.List", [alpha](ForeachLists& l) {
//       at::native::foreach_tensor_add_list_kernel_slow_(l.host(0), l.host(1), alpha);
//     });
//   }
//
// The fast route only takes lists whose ops cannot fail on the data (the
// launched work reports errors late, as a CUDA kernel does): floating-point
// tensors unless the op writes any dtype (zero_), real scalars.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include <ATen/core/ATen_fwd.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "launch.h"

namespace scaffold::runtime {

class ForeachLists {
 public:
  // Which dtypes the fast route takes.
  enum class Dtypes {
    Floating, // float, double, half, bfloat16: what the op computes in without promotion
    Any, // every dtype (ops that only write, like zero_)
  };

  // `lists`: the op's tensor lists, self first; fast() when they allow it
  // (see the top of the file). The host views are made for launched work:
  // they do not wait for the stream.
  explicit ForeachLists(std::initializer_list<at::TensorList> lists, Dtypes dtypes = Dtypes::Floating);

  bool fast() const {
    return device_.has_value();
  }
  c10::Device device() const {
    return *device_;
  }
  // Tensors per list.
  size_t size() const {
    return size_;
  }
  // Host views of list `i` (fast() only).
  const std::vector<at::Tensor>& host(size_t i) const {
    return host_[i];
  }

  // A single tensor argument besides the lists (_foreach_mul_.Tensor's
  // scalar tensor): its host view when it is a 0-dim tensor on the lists'
  // device of a floating dtype; otherwise the fast route is off (fast()
  // turns false) and an undefined tensor comes back.
  at::Tensor scalar_tensor(const at::Tensor& t);

  // A functional op's results (fast() only): one tensor per tensor of list
  // 0, on the device, with its sizes and strides (`scalar`: 0-dim instead),
  // of `dtype` or list 0's. Returns the device tensors; results() are their
  // host views, for the launched work to write.
  std::vector<at::Tensor> make_results(std::optional<at::ScalarType> dtype = std::nullopt, bool scalar = false);
  std::vector<at::Tensor>& results() {
    return host_results_;
  }

  // Launches fn(*this) on the current stream of the lists' device; *this
  // moves into the launched work.
  template <class Fn>
  void launch(const char* op, Fn&& fn) {
    const c10::DeviceIndex device = device_->index();
    scaffold::runtime::launch(device, op, [self = std::move(*this), fn = std::forward<Fn>(fn)]() mutable { fn(self); });
  }

 private:
  std::optional<c10::Device> device_;
  size_t size_ = 0;
  std::vector<std::vector<at::Tensor>> host_;
  std::vector<at::Tensor> host_results_;
};

// Host views of `tensors` for launched work (memory_access.h:
// launch_host_view), e.g. a fused optimizer's lists.
std::vector<at::Tensor> launch_host_views(at::TensorList tensors);
// The same for an optional tensor argument (grad_scale): nullopt stays so.
std::optional<at::Tensor> launch_host_view(const std::optional<at::Tensor>& t);

// One tensor list of a fused optimizer (_fused_adam_, _fused_adamw_,
// _fused_sgd_), for check_fused_optimizer_lists.
struct FusedList {
  at::TensorList tensors;
  const char* name;
  // The CPU kernels walk every list but the gradients as flat arrays.
  bool contiguous = true;
};

// The fused optimizers have no loop to fall back on, and their CPU kernels
// check little (list lengths, with messages that name nothing; dtypes
// through data_ptr) and trust the rest: these checks run on the caller, as
// CUDA's do. `like_params` (params first): every tensor strided, on
// params[0]'s device, as many per list as params, the i-th tensors of one
// floating dtype and sizes, contiguous where the list says so.
// `state_steps`: as many 1-element float32 tensors on that device. Returns
// the device (params must not be empty).
c10::Device check_fused_optimizer_lists(
    const char* op,
    std::initializer_list<FusedList> like_params,
    const std::optional<FusedList>& state_steps);

// grad_scale and found_inf of a fused optimizer: undefined, or a float32
// tensor with one element on `device`.
void check_fused_optimizer_scale(
    const char* op,
    const std::optional<at::Tensor>& t,
    const char* name,
    c10::Device device);

// The lists and scales of _fused_adam_ / _fused_adamw_ (which take the same
// arguments): max_exp_avg_sqs only with amsgrad. Returns the device.
c10::Device check_fused_adam_lists(
    const char* op,
    at::TensorList params,
    at::TensorList grads,
    at::TensorList exp_avgs,
    at::TensorList exp_avg_sqs,
    at::TensorList max_exp_avg_sqs,
    at::TensorList state_steps,
    bool amsgrad,
    const std::optional<at::Tensor>& grad_scale,
    const std::optional<at::Tensor>& found_inf);

} // namespace scaffold::runtime
