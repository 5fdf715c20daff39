// Kernels of aten::index_select for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index_select.h"

#include <c10/util/Exception.h>

#include <ATen/ops/index_select_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & index_select_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, "index_select.out: expected an int64 or int32 'index' tensor, got ", index.scalar_type());
  const rt::KernelCall call("index_select.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::index_select_out(o.host(), call.input(self, "self"), dim, call.input(index, "index"));
  return o.commit();
}

}  // namespace foo
