// Kernels of aten::sub for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sub.h"

#include <c10/util/Exception.h>

#include <ATen/ops/sub_cpu_dispatch.h>
#include <ATen/ops/sub_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/sub_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & sub_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("sub.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::sub_out(o.host(), call.input(self, "self"), call.input(other, "other"), alpha);
  return o.commit();
}

at::Tensor sub(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_sub_out> op({self, other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sub(self, other, alpha);
  }
  op.keeps_integral_inputs();
  op.meta(op.input(0), op.input(1), alpha);
  return op.launch("sub", [alpha](auto& op) { op.impl(op.input(0), op.input(1), alpha, op.output()); });
}

at::Tensor & sub_(at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_sub_out> op(self, {other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sub_(self, other, alpha);
  }
  op.keeps_integral_inputs();
  op.meta(op.self(), op.input(0), alpha);
  op.launch("sub_", [alpha](auto& op) { op.impl(op.self(), op.input(0), alpha, op.self()); });
  return self;
}

}  // namespace foo
