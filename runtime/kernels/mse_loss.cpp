// Kernels of aten::mse_loss for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mse_loss.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mse_loss_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & mse_loss_out(const at::Tensor & self, const at::Tensor & target, int64_t reduction, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("mse_loss.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::mse_loss_out(o.host(), call.input(self, "self"), call.input(target, "target"), reduction);
  return o.commit();
}

}  // namespace foo
