// Kernels of aten::native_layer_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_layer_norm.h"

#include <vector>

#include <c10/util/Exception.h>

#include <ATen/ops/native_layer_norm_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_layer_norm(const at::Tensor & input, at::IntArrayRef normalized_shape, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, double eps) {
  namespace rt = scaffold::runtime;
  // Launched when the shapes are right (input ends in normalized_shape, weight and bias have it)
  // and every tensor has input's dtype: the CPU kernel's results are then the input's sizes,
  // contiguous, and a statistic per normalized row, of input's dtype.
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  const auto fits = [&](const ::std::optional<at::Tensor>& t) {
    return !t.has_value() || !t->defined() || (t->sizes() == normalized_shape && t->scalar_type() == input.scalar_type());
  };
  if (!normalized_shape.empty() && axis >= 0 && input.sizes().slice(axis) == normalized_shape && fits(weight) && fits(bias) &&
      at::isFloatingType(input.scalar_type())) {
    rt::HostKernelLaunch launch({input, weight.value_or(at::Tensor()), bias.value_or(at::Tensor())});
    if (launch.native()) {
      std::vector<int64_t> stat_sizes(input.sizes().begin(), input.sizes().begin() + axis);
      stat_sizes.resize(input.dim(), 1);
      at::Tensor output = launch.result(input.sizes(), input.scalar_type());
      at::Tensor mean = launch.result(stat_sizes, input.scalar_type());
      at::Tensor rstd = launch.result(stat_sizes, input.scalar_type());
      launch.run("native_layer_norm", [shape = normalized_shape.vec(), eps](const rt::HostViews& in) {
        return at::cpu::native_layer_norm(in[0], shape, in[1], in[2], eps);
      });
      return {output, mean, rstd};
    }
  }
  const rt::KernelCall call("native_layer_norm", input, "input");
  auto [output, mean, rstd] = at::cpu::native_layer_norm(
      call.device_input(input, "input"), normalized_shape, call.device_input(weight, "weight"), call.device_input(bias, "bias"), eps);
  return {call.adopt(output), call.adopt(mean), call.adopt(rstd)};
}

}  // namespace foo
