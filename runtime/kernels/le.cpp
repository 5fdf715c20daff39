// Kernels of aten::le for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/le.h"

#include <c10/util/Exception.h>

#include <ATen/ops/le_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & le_out(const at::Tensor & self, const at::Scalar & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("le.Scalar_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::le_out(o.host(), call.input(self, "self"), other);
  return o.commit();
}

at::Tensor & le_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("le.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::le_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
