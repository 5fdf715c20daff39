// Kernels of aten::index for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index.h"

#include <c10/util/Exception.h>

#include <ATen/ops/index_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & index_out(const at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(static_cast<int64_t>(indices.size()) <= self.dim(), "index.Tensor_out: too many indices for a tensor of dimension ", self.dim(), " (got ", indices.size(), ")");
  const rt::KernelCall call("index.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::index_out(o.host(), call.input(self, "self"), call.indices(indices, "indices"));
  return o.commit();
}

}  // namespace foo
