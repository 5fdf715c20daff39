// Kernels of aten::native_group_norm_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_group_norm_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/native_group_norm_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_group_norm_backward(const at::Tensor & grad_out, const at::Tensor & input, const at::Tensor & mean, const at::Tensor & rstd, const ::std::optional<at::Tensor> & weight, int64_t N, int64_t C, int64_t HxW, int64_t group, ::std::array<bool,3> output_mask) {
  namespace rt = scaffold::runtime;
  // The CPU kernel trusts N, C, HxW and group for the sizes of everything it reads.
  TORCH_CHECK(input.dim() >= 2 && input.size(0) == N && input.size(1) == C && N * C * HxW == input.numel(),
              "native_group_norm_backward: input of sizes ", input.sizes(), " does not match N=", N, ", C=", C, ", HxW=", HxW);
  TORCH_CHECK(group > 0 && C % group == 0, "native_group_norm_backward: expected C=", C, " to be divisible by group=", group);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "native_group_norm_backward: grad_out's sizes ", grad_out.sizes(), " differ from input's ", input.sizes());
  TORCH_CHECK(mean.numel() == N * group && rstd.numel() == N * group, "native_group_norm_backward: expected mean and rstd with N*group=", N * group,
              " elements, got ", mean.numel(), " and ", rstd.numel());
  TORCH_CHECK(!weight.has_value() || !weight->defined() || weight->numel() == C, "native_group_norm_backward: expected weight with C=", C, " elements, got ", weight.has_value() && weight->defined() ? weight->numel() : 0);
  const rt::KernelCall call("native_group_norm_backward", input, "input");
  auto [grad_input, grad_weight, grad_bias] = at::cpu::native_group_norm_backward(
      call.device_input(grad_out, "grad_out"), call.device_input(input, "input"), call.device_input(mean, "mean"),
      call.device_input(rstd, "rstd"), call.device_input(weight, "weight"), N, C, HxW, group, output_mask);
  return {call.adopt(grad_input), call.adopt(grad_weight), call.adopt(grad_bias)};
}

}  // namespace foo
