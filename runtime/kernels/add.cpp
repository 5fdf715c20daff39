// Kernels of aten::add for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/add.h"

#include <c10/util/Exception.h>

#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/add_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/add_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & add_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("add.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::add_out(o.host(), call.input(self, "self"), call.input(other, "other"), alpha);
  return o.commit();
}

at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_ufunc_add_CPU> op({self, other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::add(self, other, alpha);
  }
  op.keeps_integral_inputs();
  op.meta(op.input(0), op.input(1), alpha);
  return op.launch("add", [alpha](auto& op) { op.impl(op.input(0), op.input(1), alpha, op.output()); });
}

at::Tensor & add_(at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_ufunc_add_CPU> op(self, {other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::add_(self, other, alpha);
  }
  op.keeps_integral_inputs();
  op.meta(op.self(), op.input(0), alpha);
  op.launch("add_", [alpha](auto& op) { op.impl(op.self(), op.input(0), alpha, op.self()); });
  return self;
}

}  // namespace foo
