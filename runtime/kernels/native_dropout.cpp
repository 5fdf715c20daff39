// Kernels of aten::native_dropout for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_dropout.h"

#include <c10/util/Exception.h>

#include <ATen/ops/bernoulli_cpu_dispatch.h>
#include <ATen/ops/clone.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ones_like.h>
#include "generator.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor> native_dropout(const at::Tensor & input, double p, ::std::optional<bool> train) {
  namespace rt = scaffold::runtime;
  // As the CPU kernel (native_dropout_cpu), with the mask drawn from the device's generator: the
  // same seed gives the same mask on foo as on the CPU. The arithmetic runs in foo's own kernels.
  const rt::KernelCall call("native_dropout", input, "input");
  const at::TensorOptions mask_options = input.options().dtype(at::kBool);
  if (input.numel() == 0) {
    return {input, at::empty_like(input)}; // as the CPU's: a "mask" of input's dtype
  }
  if (train.has_value() && !*train) {
    return {at::clone(input), at::ones_like(input, mask_options)};
  }
  const double keep = 1. - p;
  const double scale = keep == 0 ? 0. : 1. / keep;
  at::Tensor mask = at::empty_like(input, mask_options);
  at::Tensor mask_view = call.inplace(mask, "mask");
  at::cpu::bernoulli_(mask_view, keep, rt::cpu_generator(std::nullopt, call.device().index()));
  at::Tensor output = at::mul(input, mask);
  output.mul_(scale);
  return {output, mask};
}

}  // namespace foo
