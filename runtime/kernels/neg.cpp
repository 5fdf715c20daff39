// Kernels of aten::neg for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/neg.h"

#include <c10/util/Exception.h>

#include <ATen/ops/neg_cpu_dispatch.h>
#include <ATen/ops/neg_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/neg_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & neg_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("neg.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::neg_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor neg(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_neg_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::neg(self);
  }
  op.keeps_integral_inputs();
  op.meta(op.input(0));
  return op.launch("neg", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & neg_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_neg_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::neg_(self);
  }
  op.keeps_integral_inputs();
  op.meta(op.self());
  op.launch("neg_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
