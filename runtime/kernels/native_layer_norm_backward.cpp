// Kernels of aten::native_layer_norm_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_layer_norm_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/native_layer_norm_backward_cpu_dispatch.h>
#include <c10/util/accumulate.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_layer_norm_backward(const at::Tensor & grad_out, const at::Tensor & input, at::IntArrayRef normalized_shape, const at::Tensor & mean, const at::Tensor & rstd, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, ::std::array<bool,3> output_mask) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks input against normalized_shape, weight and bias, but walks grad_out,
  // mean and rstd by input's sizes without looking at theirs.
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "native_layer_norm_backward: grad_out's sizes ", grad_out.sizes(), " differ from input's ", input.sizes());
  const int64_t normalized = c10::multiply_integers(normalized_shape);
  const int64_t rows = normalized == 0 ? 0 : input.numel() / normalized;
  TORCH_CHECK(rows == 0 || (mean.numel() == rows && rstd.numel() == rows), "native_layer_norm_backward: expected mean and rstd with ", rows,
              " elements (one per normalized row), got ", mean.numel(), " and ", rstd.numel());
  // Launched when every tensor has input's dtype and the shapes are right: the CPU kernel's
  // gradients are then the input's sizes and the normalized shape, contiguous.
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  const auto fits = [&](const ::std::optional<at::Tensor>& t) {
    return !t.has_value() || !t->defined() || (t->sizes() == normalized_shape && t->scalar_type() == input.scalar_type());
  };
  const bool has_weight = weight.has_value() && weight->defined();
  const bool has_bias = bias.has_value() && bias->defined();
  if (!normalized_shape.empty() && axis >= 0 && input.sizes().slice(axis) == normalized_shape && fits(weight) && fits(bias) &&
      at::isFloatingType(input.scalar_type()) && grad_out.scalar_type() == input.scalar_type() &&
      mean.scalar_type() == input.scalar_type() && rstd.scalar_type() == input.scalar_type() &&
      (!output_mask[1] || has_weight) && (!output_mask[2] || has_bias)) {
    rt::HostKernelLaunch launch({grad_out, input, mean, rstd, weight.value_or(at::Tensor()), bias.value_or(at::Tensor())});
    if (launch.native()) {
      at::Tensor grad_input = launch.result(input.sizes(), input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[0]);
      at::Tensor grad_weight = launch.result(normalized_shape, input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[1]);
      at::Tensor grad_bias = launch.result(normalized_shape, input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[2]);
      launch.run("native_layer_norm_backward", [shape = normalized_shape.vec(), output_mask](const rt::HostViews& in) {
        return at::cpu::native_layer_norm_backward(in[0], in[1], shape, in[2], in[3], in[4], in[5], output_mask);
      });
      return {grad_input, grad_weight, grad_bias};
    }
  }
  const rt::KernelCall call("native_layer_norm_backward", input, "input");
  auto [grad_input, grad_weight, grad_bias] = at::cpu::native_layer_norm_backward(
      call.device_input(grad_out, "grad_out"), call.device_input(input, "input"), normalized_shape, call.device_input(mean, "mean"),
      call.device_input(rstd, "rstd"), call.device_input(weight, "weight"), call.device_input(bias, "bias"), output_mask);
  return {call.adopt(grad_input), call.adopt(grad_weight), call.adopt(grad_bias)};
}

}  // namespace foo
