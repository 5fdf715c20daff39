// Kernels of aten::hardsigmoid_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardsigmoid_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardsigmoid_backward_cpu_dispatch.h>
#include <ATen/ops/hardsigmoid_backward_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & hardsigmoid_backward_out(const at::Tensor & grad_output, const at::Tensor & self, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_hardsigmoid_backward_out> op(grad_input, {grad_output, self});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("hardsigmoid_backward.grad_input", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return grad_input;
    }
  }
  // grad_input must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("hardsigmoid_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::hardsigmoid_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"));
  return o.commit();
}

}  // namespace foo
