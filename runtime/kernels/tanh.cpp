// Kernels of aten::tanh for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/tanh.h"

#include <c10/util/Exception.h>

#include <ATen/ops/tanh_cpu_dispatch.h>
#include <ATen/ops/tanh_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/tanh_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & tanh_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("tanh.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::tanh_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor tanh(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_tanh_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::tanh(self);
  }
  op.meta(op.input(0));
  return op.launch("tanh", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & tanh_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_tanh_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::tanh_(self);
  }
  op.meta(op.self());
  op.launch("tanh_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
