// Kernels of aten::maximum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/maximum.h"

#include <c10/util/Exception.h>

#include <ATen/ops/maximum_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & maximum_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("maximum.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::maximum_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
