// Kernels of aten::silu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/silu_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/silu_backward_cpu_dispatch.h>
#include <ATen/ops/silu_backward_native.h>
#include "kernel_support.h"

namespace foo {

// ATen's CPU kernel, which computes half types in float32 as CUDA's does.
at::Tensor & silu_backward_out(const at::Tensor & grad_output, const at::Tensor & self, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_silu_backward_out> op(grad_input, {grad_output, self});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("silu_backward.grad_input", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return grad_input;
    }
  }
  // grad_input must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("silu_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input);
  at::cpu::silu_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"));
  return o.commit();
}

at::Tensor silu_backward(const at::Tensor & grad_output, const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_silu_backward_out> op({grad_output, self});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    return op.launch("silu_backward", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, self.options());
  return silu_backward_out(grad_output, self, result);
}

}  // namespace foo
