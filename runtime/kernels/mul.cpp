// Kernels of aten::mul for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mul.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mul_cpu_dispatch.h>
#include <ATen/ops/mul_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/mul_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & mul_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("mul.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::mul_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

at::Tensor mul(const at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_mul_out> op({self, other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::mul(self, other);
  }
  op.keeps_integral_inputs();
  op.meta(op.input(0), op.input(1));
  return op.launch("mul", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
}

at::Tensor & mul_(at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_mul_out> op(self, {other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::mul_(self, other);
  }
  op.keeps_integral_inputs();
  op.meta(op.self(), op.input(0));
  op.launch("mul_", [](auto& op) { op.impl(op.self(), op.input(0), op.self()); });
  return self;
}

}  // namespace foo
