// Kernels of aten::pow for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/pow.h"

#include <c10/util/Exception.h>

#include <ATen/ops/pow_cpu_dispatch.h>
#include <ATen/ops/pow_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & pow_out(const at::Tensor & self, const at::Scalar & exponent, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_pow_Tensor_Scalar_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0), exponent);
    if (op.fits()) {
      op.launch("pow.Tensor_Scalar_out", [exponent](auto& op) { op.impl(op.input(0), exponent, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("pow.Tensor_Scalar_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::pow_out(o.host(), call.input(self, "self"), exponent);
  return o.commit();
}

}  // namespace foo
