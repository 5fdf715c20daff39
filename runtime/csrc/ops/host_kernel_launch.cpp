#include "host_kernel_launch.h"

#include <optional>

#include <ATen/ops/empty_like.h>

#include "core_ops.h"
#include "kernel_call.h"
#include "memory_access.h"

namespace scaffold::runtime {

HostKernelLaunch::HostKernelLaunch(std::vector<at::Tensor> operands) : operands_(std::move(operands)) {
  std::optional<c10::Device> device;
  for (const at::Tensor& t : operands_) {
    if (!t.defined()) {
      continue;
    }
    if (!on_backend(t) || t.layout() != c10::kStrided || (device.has_value() && *device != t.device())) {
      return;
    }
    device = t.device();
  }
  if (device.has_value()) {
    device_ = *device;
    native_ = true;
  }
}

at::Tensor HostKernelLaunch::result(
    at::IntArrayRef sizes, at::ScalarType dtype, at::MemoryFormat format, bool wanted) {
  TORCH_INTERNAL_ASSERT(native_, "HostKernelLaunch::result: operands not native");
  if (!wanted) {
    result_views_.emplace_back();
    return at::Tensor();
  }
  at::Tensor result = empty(sizes, dtype, c10::kStrided, device_, std::nullopt, format);
  result_views_.push_back(launch_host_view(result));
  return result;
}

at::Tensor HostKernelLaunch::result_like(const at::Tensor& prototype) {
  TORCH_INTERNAL_ASSERT(native_ && prototype.device() == device_, "HostKernelLaunch::result_like: not an operand's device");
  at::Tensor result = at::empty_like(prototype);
  result_views_.push_back(launch_host_view(result));
  return result;
}

HostViews HostKernelLaunch::host_views() const {
  HostViews views;
  views.reserve(operands_.size());
  for (const at::Tensor& t : operands_) {
    views.push_back(t.defined() ? launch_host_view(t) : at::Tensor());
  }
  return views;
}

void HostKernelLaunch::copy_results(const HostViews& outputs, std::initializer_list<const at::Tensor*> computed) {
  TORCH_INTERNAL_ASSERT(outputs.size() == computed.size(), "HostKernelLaunch: ", computed.size(), " results for ", outputs.size());
  size_t i = 0;
  for (const at::Tensor* host : computed) {
    const at::Tensor& output = outputs[i++];
    if (!output.defined()) {
      continue;
    }
    TORCH_INTERNAL_ASSERT(
        host->sizes() == output.sizes(), "HostKernelLaunch: result ", i - 1, " has sizes ", host->sizes(),
        ", allocated ", output.sizes());
    output.copy_(*host);
  }
}

} // namespace scaffold::runtime
