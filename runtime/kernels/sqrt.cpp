// Kernels of aten::sqrt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sqrt.h"

#include <c10/util/Exception.h>

#include <ATen/ops/sqrt_cpu_dispatch.h>
#include <ATen/ops/sqrt_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/sqrt_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & sqrt_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("sqrt.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::sqrt_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor sqrt(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_sqrt_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sqrt(self);
  }
  op.meta(op.input(0));
  return op.launch("sqrt", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & sqrt_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_sqrt_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sqrt_(self);
  }
  op.meta(op.self());
  op.launch("sqrt_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
