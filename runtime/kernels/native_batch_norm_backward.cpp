// Kernels of aten::native_batch_norm_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_batch_norm_backward.h"

#include <array>

#include <c10/util/Exception.h>

#include <ATen/ops/native_batch_norm_backward_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_batch_norm_backward(const at::Tensor & grad_out, const at::Tensor & input, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & running_mean, const ::std::optional<at::Tensor> & running_var, const ::std::optional<at::Tensor> & save_mean, const ::std::optional<at::Tensor> & save_invstd, bool train, double eps, ::std::array<bool,3> output_mask) {
  namespace rt = scaffold::runtime;
  // The CPU kernel walks grad_out with input's sizes and reads C elements of each statistic
  // without checking either.
  TORCH_CHECK(input.dim() >= 2, "native_batch_norm_backward: expected an input with a batch and a channel dimension, got ", input.dim(), " dimension(s)");
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "native_batch_norm_backward: grad_out's sizes ", grad_out.sizes(), " differ from input's ", input.sizes());
  const int64_t channels = input.size(1);
  const auto defined = [](const ::std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); };
  const std::pair<const ::std::optional<at::Tensor>*, const char*> per_channel[] = {
      {&weight, "weight"}, {&running_mean, "running_mean"}, {&running_var, "running_var"}, {&save_mean, "save_mean"}, {&save_invstd, "save_invstd"}};
  for (const auto& [t, name] : per_channel) {
    TORCH_CHECK(!defined(*t) || (*t)->numel() == channels || (!train && (*t)->numel() == 0),
                "native_batch_norm_backward: ", name, " should contain ", channels, " elements not ", (*t)->numel());
  }
  TORCH_CHECK(!train || (defined(save_mean) && defined(save_invstd)), "native_batch_norm_backward: save_mean and save_invstd must be defined in training mode");
  TORCH_CHECK(train || (defined(running_mean) && defined(running_var)), "native_batch_norm_backward: running_mean and running_var must be defined in evaluation mode");
  // Launched when every tensor has input's dtype: the CPU kernel's gradients are then the input's
  // sizes in its memory format, and one value per channel.
  const auto same_dtype = [&](const ::std::optional<at::Tensor>& t) {
    return !defined(t) || t->scalar_type() == input.scalar_type();
  };
  if (at::isFloatingType(input.scalar_type()) && grad_out.scalar_type() == input.scalar_type() && same_dtype(weight) &&
      same_dtype(running_mean) && same_dtype(running_var) && same_dtype(save_mean) && same_dtype(save_invstd)) {
    rt::HostKernelLaunch launch({grad_out, input, weight.value_or(at::Tensor()), running_mean.value_or(at::Tensor()),
                                 running_var.value_or(at::Tensor()), save_mean.value_or(at::Tensor()),
                                 save_invstd.value_or(at::Tensor())});
    if (launch.native()) {
      const std::array<int64_t, 1> per_channel_sizes{channels};
      at::Tensor grad_input = launch.result(input.sizes(), input.scalar_type(), input.suggest_memory_format(), output_mask[0]);
      at::Tensor grad_weight = launch.result(per_channel_sizes, input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[1]);
      at::Tensor grad_bias = launch.result(per_channel_sizes, input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[2]);
      launch.run("native_batch_norm_backward", [train, eps, output_mask](const rt::HostViews& in) {
        return at::cpu::native_batch_norm_backward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], train, eps, output_mask);
      });
      return {grad_input, grad_weight, grad_bias};
    }
  }
  const rt::KernelCall call("native_batch_norm_backward", input, "input");
  auto [grad_input, grad_weight, grad_bias] = at::cpu::native_batch_norm_backward(
      call.device_input(grad_out, "grad_out"), call.device_input(input, "input"), call.device_input(weight, "weight"),
      call.device_input(running_mean, "running_mean"), call.device_input(running_var, "running_var"),
      call.device_input(save_mean, "save_mean"), call.device_input(save_invstd, "save_invstd"), train, eps, output_mask);
  return {call.adopt(grad_input), call.adopt(grad_weight), call.adopt(grad_bias)};
}

}  // namespace foo
