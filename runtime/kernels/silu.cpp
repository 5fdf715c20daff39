// Kernels of aten::silu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/silu.h"

#include <c10/util/Exception.h>

#include <ATen/ops/silu_cpu_dispatch.h>
#include <ATen/ops/silu_native.h>
#include <ATen/ops/empty.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & silu_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_silu_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0));
    if (op.fits()) {
      op.launch("silu.out", [](auto& op) { op.impl(op.input(0), op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("silu.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::silu_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor silu(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_silu_out> op({self});
  if (op.native()) {
    op.meta(op.input(0));
    return op.launch("silu", [](auto& op) { op.impl(op.input(0), op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, self.options());
  return silu_out(self, result);
}

}  // namespace foo
