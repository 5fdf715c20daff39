// Kernels of aten::cat for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cat.h"

#include <c10/util/Exception.h>

#include <ATen/ops/cat_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & cat_out(const at::ITensorListRef & tensors, int64_t dim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(tensors.size() > 0, "cat.out: expected a non-empty list of tensors");
  const rt::KernelCall call("cat.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::cat_out(o.host(), call.inputs(tensors, "tensors"), dim);
  return o.commit();
}

}  // namespace foo
