// Kernels of aten::gelu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu.h"

#include <c10/util/Exception.h>

#include <ATen/ops/gelu_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & gelu_out(const at::Tensor & self, c10::string_view approximate, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "gelu.out: approximate must be 'none' or 'tanh', got '", approximate, "'");
  const rt::KernelCall call("gelu.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::gelu_out(o.host(), call.input(self, "self"), approximate);
  return o.commit();
}

}  // namespace foo
