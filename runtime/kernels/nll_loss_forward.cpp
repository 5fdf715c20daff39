// Kernels of aten::nll_loss_forward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_forward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/nll_loss_forward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor &,at::Tensor &> nll_loss_forward_out(const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, at::Tensor & output, at::Tensor & total_weight) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("nll_loss_forward.output", output, "output");
  rt::OutputView loss = call.output(output, "output");
  rt::OutputView weight_sum = call.output(total_weight, "total_weight");
  at::cpu::nll_loss_forward_out(loss.host(), weight_sum.host(), call.input(self, "self"), call.input(target, "target"), call.input(weight, "weight"), reduction, ignore_index);
  return {loss.commit(), weight_sum.commit()};
}

}  // namespace foo
