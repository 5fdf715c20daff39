// Kernels of aten::native_layer_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_layer_norm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/native_layer_norm_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_layer_norm(const at::Tensor & input, at::IntArrayRef normalized_shape, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, double eps) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks the shapes (input ends in normalized_shape, weight and bias have it).
  const rt::KernelCall call("native_layer_norm", input, "input");
  auto [output, mean, rstd] = at::cpu::native_layer_norm(
      call.device_input(input, "input"), normalized_shape, call.device_input(weight, "weight"), call.device_input(bias, "bias"), eps);
  return {call.adopt(output), call.adopt(mean), call.adopt(rstd)};
}

}  // namespace foo
