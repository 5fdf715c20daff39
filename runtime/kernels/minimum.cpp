// Kernels of aten::minimum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/minimum.h"

#include <c10/util/Exception.h>

#include <ATen/ops/minimum_cpu_dispatch.h>
#include <ATen/ops/minimum_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & minimum_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_minimum_out> op(out, {self, other});
  if (op.native()) {
    op.keeps_integral_inputs();
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("minimum.out", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("minimum.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::minimum_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
