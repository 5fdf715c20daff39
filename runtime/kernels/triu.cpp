// Kernels of aten::triu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/triu.h"

#include <c10/util/Exception.h>

#include <ATen/ops/triu_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & triu_out(const at::Tensor & self, int64_t diagonal, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("triu.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::triu_out(o.host(), call.device_input(self, "self"), diagonal);
  return o.commit();
}

}  // namespace foo
