// Kernels of aten::nll_loss_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/nll_loss_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & nll_loss_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, const at::Tensor & total_weight, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("nll_loss_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::nll_loss_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"), call.input(target, "target"), call.input(weight, "weight"), reduction, ignore_index, call.input(total_weight, "total_weight"));
  return o.commit();
}

}  // namespace foo
