// Kernels of aten::sin for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sin.h"

#include <c10/util/Exception.h>

#include <ATen/ops/sin_cpu_dispatch.h>
#include <ATen/ops/sin_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/sin_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & sin_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("sin.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::sin_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor sin(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_sin_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sin(self);
  }
  op.meta(op.input(0));
  return op.launch("sin", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & sin_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_sin_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::sin_(self);
  }
  op.meta(op.self());
  op.launch("sin_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
