// Kernels of aten::hardsigmoid for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardsigmoid.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardsigmoid_cpu_dispatch.h>
#include <ATen/ops/hardsigmoid_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & hardsigmoid_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_hardsigmoid_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0));
    if (op.fits()) {
      op.launch("hardsigmoid.out", [](auto& op) { op.impl(op.input(0), op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("hardsigmoid.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::hardsigmoid_out(o.host(), call.input(self, "self"));
  return o.commit();
}

}  // namespace foo
