// Kernels of aten::addr for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/addr.h"

#include <c10/util/Exception.h>

#include <ATen/ops/addr_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor addr(const at::Tensor & self, const at::Tensor & vec1, const at::Tensor & vec2, const at::Scalar & beta, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  // ATen's CPU kernel: beta * self + alpha * outer(vec1, vec2) in one pass, half types in float32
  // (CUDA's too); its result is copied to the device. self broadcasts, so a CPU 0-dim tensor
  // is a wrapped scalar, as for CUDA.
  const rt::KernelCall call("addr", vec1, "vec1");
  return call.adopt(at::cpu::addr(call.input(self, "self"), call.device_input(vec1, "vec1"), call.device_input(vec2, "vec2"), beta, alpha));
}

}  // namespace foo
