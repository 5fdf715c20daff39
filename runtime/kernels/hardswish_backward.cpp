// Kernels of aten::hardswish_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardswish_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardswish_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor hardswish_backward(const at::Tensor & grad_output, const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // A binary TensorIterator op on the CPU, with no out= variant: its result is copied to the device.
  const rt::KernelCall call("hardswish_backward", self, "self");
  return call.adopt(at::cpu::hardswish_backward(call.input(grad_output, "grad_output"), call.input(self, "self")));
}

}  // namespace foo
