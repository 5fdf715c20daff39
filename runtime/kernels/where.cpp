// Kernels of aten::where for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/where.h"

#include <c10/util/Exception.h>

#include <ATen/ops/where_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & where_out(const at::Tensor & condition, const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(condition.scalar_type() == at::kBool || condition.scalar_type() == at::kByte, "where.self_out: expected a boolean condition, got ", condition.scalar_type());
  const rt::KernelCall call("where.self_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::where_out(o.host(), call.input(condition, "condition"), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
