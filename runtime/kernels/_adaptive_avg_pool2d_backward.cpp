// Kernels of aten::_adaptive_avg_pool2d_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_adaptive_avg_pool2d_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_adaptive_avg_pool2d_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor _adaptive_avg_pool2d_backward(const at::Tensor & grad_output, const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks the dimensions and dtypes; it has no out= variant, so its result is
  // copied to the device.
  const rt::KernelCall call("_adaptive_avg_pool2d_backward", self, "self");
  return call.adopt(at::cpu::_adaptive_avg_pool2d_backward(call.device_input(grad_output, "grad_output"), call.device_input(self, "self")));
}

}  // namespace foo
