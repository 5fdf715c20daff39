// Kernels of aten::max for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/max.h"

#include <c10/util/Exception.h>

#include <ATen/ops/max_cpu_dispatch.h>
#include "full_reduction.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor &,at::Tensor &> max_out(const at::Tensor & self, int64_t dim, bool keepdim, at::Tensor & max, at::Tensor & max_values) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("max.dim_max", max, "max");
  rt::OutputView values = call.output(max, "max");
  rt::OutputView indices = call.output(max_values, "max_values");
  at::cpu::max_out(values.host(), indices.host(), call.input(self, "self"), dim, keepdim);
  return {values.commit(), indices.commit()};
}

at::Tensor max(const at::Tensor & self) {
  return scaffold::runtime::full_reduction("max", at::cpu::max, at::cpu::max_out, self);
}

at::Tensor & max_out(const at::Tensor & self, at::Tensor & out) {
  return scaffold::runtime::full_reduction_out("max.unary_out", at::cpu::max_out, self, out);
}

}  // namespace foo
