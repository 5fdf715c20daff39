// Kernels of aten::hardsigmoid_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardsigmoid_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardsigmoid_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & hardsigmoid_backward_out(const at::Tensor & grad_output, const at::Tensor & self, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("hardsigmoid_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::hardsigmoid_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"));
  return o.commit();
}

}  // namespace foo
