// Kernels of aten::native_dropout_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_dropout_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mul.h>
#include "kernel_support.h"

namespace foo {

at::Tensor native_dropout_backward(const at::Tensor & grad_output, const at::Tensor & mask, double scale) {
  namespace rt = scaffold::runtime;
  // As CUDA's: a boolean mask on grad_output's device (the CPU's accepts any, and a CPU 0-dim
  // mask would pass mul as a scalar).
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  const rt::KernelCall call("native_dropout_backward", grad_output, "grad_output");
  (void)call.device_input(mask, "mask");
  // The CPU's formula, grad_output * mask * scale, in foo's own kernels.
  at::Tensor grad_input = at::mul(grad_output, mask);
  grad_input.mul_(scale);
  return grad_input;
}

}  // namespace foo
