// Kernels of aten::hardtanh_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardtanh_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardtanh_backward_cpu_dispatch.h>
#include <ATen/ops/result_type.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & hardtanh_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & min_val, const at::Scalar & max_val, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("hardtanh_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::hardtanh_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"), min_val, max_val);
  return o.commit();
}

at::Tensor hardtanh_backward(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & min_val, const at::Scalar & max_val) {
  namespace rt = scaffold::runtime;
  // The CPU's is a binary TensorIterator op with no out= kernel of its own: hardtanh_backward.out
  // into a result of the operands' common dtype.
  rt::Elementwise e({grad_output, self}, at::result_type(grad_output, self));
  if (e.fast()) {
    return e.launch("hardtanh_backward", [min_val, max_val](rt::Elementwise& e) {
      at::cpu::hardtanh_backward_out(e.out(), e.input(0), e.input(1), min_val, max_val);
    });
  }
  if (!e.native()) {
    const rt::KernelCall call("hardtanh_backward", self, "self");
    (void)call.input(grad_output, "grad_output"); // raises the device error
  }
  return e.adopt(at::cpu::hardtanh_backward(e.input(0), e.input(1), min_val, max_val));
}

}  // namespace foo
