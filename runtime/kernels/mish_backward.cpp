// Kernels of aten::mish_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mish_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mish_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor mish_backward(const at::Tensor & grad_output, const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // ATen's CPU kernel (half types computed in float32, as CUDA's); it has no out= variant, so its
  // result is copied to the device.
  const rt::KernelCall call("mish_backward", self, "self");
  return call.adopt(at::cpu::mish_backward(call.device_input(grad_output, "grad_output"), call.device_input(self, "self")));
}

}  // namespace foo
