// Kernels of aten::gelu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu_backward.h"

#include <string>

#include <c10/util/Exception.h>

#include <ATen/ops/gelu_backward_cpu_dispatch.h>
#include <ATen/ops/gelu_backward_native.h>
#include <ATen/ops/empty.h>
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

at::Tensor gelu_backward(const at::Tensor & grad_output, const at::Tensor & self, c10::string_view approximate) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "gelu_backward: approximate must be 'none' or 'tanh', got '", approximate, "'");
  rt::StructuredFunctional<at::native::structured_gelu_backward_out_cpu> op({grad_output, self});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), approximate);
    return op.launch("gelu_backward", [approximate = std::string(approximate)](auto& op) {
      op.impl(op.input(0), op.input(1), approximate, op.output());
    });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, grad_output.options());
  return gelu_backward_out(grad_output, self, approximate, result);
}

}  // namespace foo
