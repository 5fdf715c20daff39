// Kernels of aten::exp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/exp.h"

#include <c10/util/Exception.h>

#include <ATen/ops/exp_cpu_dispatch.h>
#include <ATen/ops/exp_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/exp_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & exp_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("exp.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::exp_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor exp(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_exp_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::exp(self);
  }
  op.meta(op.input(0));
  return op.launch("exp", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & exp_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_exp_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::exp_(self);
  }
  op.meta(op.self());
  op.launch("exp_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
