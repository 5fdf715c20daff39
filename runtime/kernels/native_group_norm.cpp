// Kernels of aten::native_group_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_group_norm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/native_group_norm_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_group_norm(const at::Tensor & input, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks groups against C and weight/bias against C, but trusts N and HxW.
  TORCH_CHECK(input.dim() >= 2 && input.size(0) == N && input.size(1) == C && N * C * HxW == input.numel(),
              "native_group_norm: input of sizes ", input.sizes(), " does not match N=", N, ", C=", C, ", HxW=", HxW);
  const rt::KernelCall call("native_group_norm", input, "input");
  auto [output, mean, rstd] = at::cpu::native_group_norm(
      call.device_input(input, "input"), call.device_input(weight, "weight"), call.device_input(bias, "bias"), N, C, HxW, group, eps);
  return {call.adopt(output), call.adopt(mean), call.adopt(rstd)};
}

}  // namespace foo
