// Kernels of aten::hardswish_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardswish_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardswish_backward_cpu_dispatch.h>
#include <ATen/ops/result_type.h>
#include "kernel_support.h"

namespace foo {

at::Tensor hardswish_backward(const at::Tensor & grad_output, const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // A binary TensorIterator op on the CPU with no out= kernel: launched, its result is computed
  // into a host tensor and copied into the device result (one extra pass over a gradient).
  rt::Elementwise e({grad_output, self}, at::result_type(grad_output, self));
  if (e.fast()) {
    return e.launch("hardswish_backward", [](rt::Elementwise& e) {
      e.out().copy_(at::cpu::hardswish_backward(e.input(0), e.input(1)));
    });
  }
  if (!e.native()) {
    const rt::KernelCall call("hardswish_backward", self, "self");
    (void)call.input(grad_output, "grad_output"); // raises the device error
  }
  return e.adopt(at::cpu::hardswish_backward(e.input(0), e.input(1)));
}

}  // namespace foo
