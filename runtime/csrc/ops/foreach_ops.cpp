#include "foreach_ops.h"

#include <c10/core/Layout.h>
#include <c10/util/Exception.h>

#include "core_ops.h"
#include "kernel_call.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

bool takes_dtype(at::ScalarType dtype, ForeachLists::Dtypes dtypes) {
  return dtypes == ForeachLists::Dtypes::Any || at::isFloatingType(dtype);
}

// Strides of a dimension of size 1 say nothing about the layout: a
// depthwise convolution's weight (C, 1, k, k) and its gradient, which the
// convolution writes channels-last, are laid out alike with different
// strides there. CUDA's fast route ignores them too.
bool same_layout(const at::Tensor& a, const at::Tensor& b) {
  const at::IntArrayRef sizes = a.sizes();
  const at::IntArrayRef a_strides = a.strides();
  const at::IntArrayRef b_strides = b.strides();
  for (size_t dim = 0; dim < sizes.size(); ++dim) {
    if (sizes[dim] != 1 && a_strides[dim] != b_strides[dim]) {
      return false;
    }
  }
  return true;
}

} // namespace

ForeachLists::ForeachLists(std::initializer_list<at::TensorList> lists, Dtypes dtypes) {
  const at::TensorList self = *lists.begin();
  size_ = self.size();
  if (size_ == 0 || !self[0].defined() || !on_backend(self[0])) {
    return;
  }
  const c10::Device device = self[0].device();
  for (const at::TensorList list : lists) {
    if (list.size() != size_) {
      return;
    }
  }
  for (size_t i = 0; i < size_; ++i) {
    const at::Tensor& first = self[i];
    if (!first.defined() || first.device() != device || first.layout() != c10::kStrided ||
        !takes_dtype(first.scalar_type(), dtypes) || !first.is_non_overlapping_and_dense()) {
      return;
    }
    for (const at::TensorList list : lists) {
      const at::Tensor& t = list[i];
      if (!t.defined() || t.device() != device || t.layout() != c10::kStrided || t.scalar_type() != first.scalar_type() ||
          t.sizes() != first.sizes() || !same_layout(t, first)) {
        return;
      }
    }
  }
  host_.reserve(lists.size());
  for (const at::TensorList list : lists) {
    std::vector<at::Tensor>& views = host_.emplace_back();
    views.reserve(size_);
    for (const at::Tensor& t : list) {
      views.push_back(launch_host_view(t));
    }
  }
  device_ = device;
}

at::Tensor ForeachLists::scalar_tensor(const at::Tensor& t) {
  if (!fast() || !t.defined() || t.dim() != 0 || t.device() != *device_ || t.layout() != c10::kStrided ||
      !at::isFloatingType(t.scalar_type())) {
    device_.reset();
    return at::Tensor();
  }
  return launch_host_view(t);
}

std::vector<at::Tensor> ForeachLists::make_results(std::optional<at::ScalarType> dtype, bool scalar) {
  TORCH_INTERNAL_ASSERT(fast(), "ForeachLists::make_results: not fast()");
  std::vector<at::Tensor> results;
  results.reserve(size_);
  host_results_.reserve(size_);
  for (const at::Tensor& like : host_[0]) {
    const at::ScalarType result_dtype = dtype.value_or(like.scalar_type());
    at::Tensor result = scalar
        ? empty(at::IntArrayRef(), result_dtype, c10::kStrided, *device_, std::nullopt, std::nullopt)
        : empty_strided(like.sizes(), like.strides(), result_dtype, c10::kStrided, *device_, std::nullopt);
    host_results_.push_back(launch_host_view(result));
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<at::Tensor> launch_host_views(at::TensorList tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    views.push_back(launch_host_view(t));
  }
  return views;
}

std::optional<at::Tensor> launch_host_view(const std::optional<at::Tensor>& t) {
  if (!t.has_value() || !t->defined()) {
    return std::nullopt;
  }
  return launch_host_view(*t);
}

c10::Device check_fused_optimizer_lists(
    const char* op,
    std::initializer_list<FusedList> like_params,
    const std::optional<FusedList>& state_steps) {
  const FusedList& params = *like_params.begin();
  TORCH_CHECK(!params.tensors.empty(), op, ": expected at least one parameter");
  const at::Tensor& first = params.tensors[0];
  TORCH_CHECK(
      first.defined() && on_backend(first),
      op, ": expected ", params.name, "[0] to be a ", c10::get_privateuse1_backend(), " tensor, got one on ", first.device());
  const c10::Device device = first.device();
  const size_t n = params.tensors.size();
  for (const FusedList& list : like_params) {
    TORCH_CHECK(
        list.tensors.size() == n, op, ": expected as many ", list.name, " as ", params.name, " (", n, "), got ", list.tensors.size());
    for (size_t i = 0; i < n; ++i) {
      const at::Tensor& t = list.tensors[i];
      const at::Tensor& param = params.tensors[i];
      TORCH_CHECK(t.defined(), op, ": ", list.name, "[", i, "] is an undefined tensor");
      TORCH_CHECK(
          t.device() == device, op, ": expected all tensors on ", device, ", but ", list.name, "[", i, "] is on ", t.device());
      TORCH_CHECK(t.layout() == c10::kStrided, op, ": ", list.name, "[", i, "] is not a strided tensor");
      TORCH_CHECK(
          at::isFloatingType(t.scalar_type()), op, ": expected floating-point tensors, but ", list.name, "[", i, "] is ",
          t.scalar_type());
      TORCH_CHECK(
          t.scalar_type() == param.scalar_type(), op, ": ", list.name, "[", i, "] is ", t.scalar_type(), " but ",
          params.name, "[", i, "] is ", param.scalar_type());
      TORCH_CHECK(
          t.sizes() == param.sizes(), op, ": ", list.name, "[", i, "] has sizes ", t.sizes(), " but ", params.name, "[", i,
          "] has ", param.sizes());
      TORCH_CHECK(!list.contiguous || t.is_contiguous(), op, ": ", list.name, "[", i, "] must be contiguous");
    }
  }
  if (state_steps.has_value()) {
    TORCH_CHECK(
        state_steps->tensors.size() == n, op, ": expected as many ", state_steps->name, " as ", params.name, " (", n,
        "), got ", state_steps->tensors.size());
    for (size_t i = 0; i < n; ++i) {
      const at::Tensor& step = state_steps->tensors[i];
      TORCH_CHECK(
          step.defined() && step.device() == device && step.layout() == c10::kStrided && step.numel() == 1 &&
              step.scalar_type() == at::kFloat,
          op, ": expected ", state_steps->name, "[", i, "] to be a float32 tensor with one element on ", device);
    }
  }
  return device;
}

void check_fused_optimizer_scale(
    const char* op,
    const std::optional<at::Tensor>& t,
    const char* name,
    c10::Device device) {
  if (!t.has_value() || !t->defined()) {
    return;
  }
  TORCH_CHECK(
      t->device() == device && t->layout() == c10::kStrided && t->numel() == 1 && t->scalar_type() == at::kFloat,
      op, ": expected ", name, " to be a float32 tensor with one element on ", device, ", got a ", t->scalar_type(),
      " tensor of sizes ", t->sizes(), " on ", t->device());
}

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
    const std::optional<at::Tensor>& found_inf) {
  TORCH_CHECK(
      amsgrad || max_exp_avg_sqs.empty(), op, ": max_exp_avg_sqs must be empty without amsgrad, got ",
      max_exp_avg_sqs.size(), " tensors");
  const FusedList steps{state_steps, "state_steps"};
  const c10::Device device = amsgrad
      ? check_fused_optimizer_lists(
            op,
            {{params, "params"}, {grads, "grads", /*contiguous=*/false}, {exp_avgs, "exp_avgs"},
             {exp_avg_sqs, "exp_avg_sqs"}, {max_exp_avg_sqs, "max_exp_avg_sqs"}},
            steps)
      : check_fused_optimizer_lists(
            op,
            {{params, "params"}, {grads, "grads", /*contiguous=*/false}, {exp_avgs, "exp_avgs"},
             {exp_avg_sqs, "exp_avg_sqs"}},
            steps);
  check_fused_optimizer_scale(op, grad_scale, "grad_scale", device);
  check_fused_optimizer_scale(op, found_inf, "found_inf", device);
  return device;
}

} // namespace scaffold::runtime
