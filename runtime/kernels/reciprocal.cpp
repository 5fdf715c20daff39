// Kernels of aten::reciprocal for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/reciprocal.h"

#include <c10/util/Exception.h>

#include <ATen/ops/reciprocal_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & reciprocal_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("reciprocal.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::reciprocal_out(o.host(), call.input(self, "self"));
  return o.commit();
}

}  // namespace foo
