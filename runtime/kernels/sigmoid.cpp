// Kernels of aten::sigmoid for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sigmoid.h"

#include <c10/util/Exception.h>

#include <ATen/ops/sigmoid_cpu_dispatch.h>
#include <ATen/ops/sigmoid_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/sigmoid_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & sigmoid_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("sigmoid.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::sigmoid_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor sigmoid(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_sigmoid_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sigmoid(self);
  }
  op.meta(op.input(0));
  return op.launch("sigmoid", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & sigmoid_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_sigmoid_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sigmoid_(self);
  }
  op.meta(op.self());
  op.launch("sigmoid_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
