// Kernels of aten::tanh for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/tanh.h"

#include <c10/util/Exception.h>

#include <ATen/ops/tanh_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & tanh_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("tanh.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::tanh_out(o.host(), call.input(self, "self"));
  return o.commit();
}

}  // namespace foo
