// Kernels of aten::clamp_min for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/clamp_min.h"

#include <c10/util/Exception.h>

#include "kernel_support.h"

#include <ATen/ops/clamp_min_cpu_dispatch.h>

namespace foo {

at::Tensor & clamp_min_out(const at::Tensor & self, const at::Tensor & min, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("clamp_min.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::clamp_min_out(o.host(), call.input(self, "self"), call.input(min, "min"));
  return o.commit();
}

}  // namespace foo
