// Kernels of aten::masked_fill for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/masked_fill.h"

#include <c10/util/Exception.h>

#include <ATen/ops/masked_fill_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & masked_fill_(at::Tensor & self, const at::Tensor & mask, const at::Scalar & value) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_: expected a boolean mask, got ", mask.scalar_type());
  const rt::KernelCall call("masked_fill_.Scalar", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::masked_fill_(host, call.input(mask, "mask"), value);
  return self;
}

}  // namespace foo
