// Kernels of aten::min for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/min.h"

#include <c10/util/Exception.h>

#include <ATen/ops/min_cpu_dispatch.h>
#include "full_reduction.h"

namespace foo {

at::Tensor min(const at::Tensor & self) {
  return scaffold::runtime::full_reduction("min", at::cpu::min, at::cpu::min_out, self);
}

at::Tensor & min_out(const at::Tensor & self, at::Tensor & out) {
  return scaffold::runtime::full_reduction_out("min.unary_out", at::cpu::min_out, self, out);
}

}  // namespace foo
