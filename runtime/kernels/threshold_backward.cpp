// Kernels of aten::threshold_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/threshold_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/threshold_backward_cpu_dispatch.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/empty.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & threshold_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & threshold, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("threshold_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::threshold_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"), threshold);
  return o.commit();
}

at::Tensor threshold_backward(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & threshold) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_threshold_backward_out> op({grad_output, self});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), threshold);
    return op.launch("threshold_backward", [threshold](auto& op) { op.impl(op.input(0), op.input(1), threshold, op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, grad_output.options());
  return threshold_backward_out(grad_output, self, threshold, result);
}

}  // namespace foo
