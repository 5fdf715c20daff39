// Kernels of aten::cos for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cos.h"

#include <c10/util/Exception.h>

#include <ATen/ops/cos_cpu_dispatch.h>
#include <ATen/ops/cos_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/cos_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & cos_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("cos.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::cos_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor cos(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_cos_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::cos(self);
  }
  op.meta(op.input(0));
  return op.launch("cos", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & cos_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_cos_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::cos_(self);
  }
  op.meta(op.self());
  op.launch("cos_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
