// Kernels of aten::bitwise_and for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/bitwise_and.h"

#include <c10/util/Exception.h>

#include <ATen/ops/bitwise_and_cpu_dispatch.h>
#include <ATen/ops/bitwise_and_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & bitwise_and_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  // Launched for boolean and integer operands (attention masks combined): the CPU kernel has loops
  // for those alone, and raises for the others when it runs -- inline, here, at the call.
  if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true) &&
      c10::isIntegralType(other.scalar_type(), /*includeBool=*/true)) {
    rt::StructuredOut<at::native::structured_bitwise_and_out> op(out, {self, other});
    if (op.native()) {
      op.keeps_integral_inputs();
      op.meta(op.input(0), op.input(1));
      if (op.fits()) {
        op.launch("bitwise_and.Tensor_out", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
        return out;
      }
    }
  }
  const rt::KernelCall call("bitwise_and.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::bitwise_and_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
