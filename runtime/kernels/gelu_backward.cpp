// Kernels of aten::gelu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/gelu_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & gelu_backward_out(const at::Tensor & grad_output, const at::Tensor & self, c10::string_view approximate, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "gelu_backward.grad_input: approximate must be 'none' or 'tanh', got '", approximate, "'");
  const rt::KernelCall call("gelu_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::gelu_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"), approximate);
  return o.commit();
}

}  // namespace foo
