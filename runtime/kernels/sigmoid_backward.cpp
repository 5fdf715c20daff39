// Kernels of aten::sigmoid_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sigmoid_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/sigmoid_backward_cpu_dispatch.h>
#include <ATen/ops/sigmoid_backward_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & sigmoid_backward_out(const at::Tensor & grad_output, const at::Tensor & output, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_sigmoid_backward_out> op(grad_input, {grad_output, output});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("sigmoid_backward.grad_input", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return grad_input;
    }
  }
  // grad_input must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("sigmoid_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::sigmoid_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(output, "output"));
  return o.commit();
}

}  // namespace foo
