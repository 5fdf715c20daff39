// Kernels of aten::linalg_vector_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/linalg_vector_norm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/linalg_vector_norm_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & linalg_vector_norm_out(const at::Tensor & self, const at::Scalar & ord, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("linalg_vector_norm.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::linalg_vector_norm_out(o.host(), call.device_input(self, "self"), ord, dim, keepdim, dtype);
  return o.commit();
}

}  // namespace foo
