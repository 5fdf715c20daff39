// Kernels of aten::div for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/div.h"

#include <c10/util/Exception.h>

#include <ATen/ops/div_cpu_dispatch.h>
#include <ATen/ops/div_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/div_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & div_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("div.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::div_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

at::Tensor div(const at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_div_out> op({self, other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::div(self, other);
  }
  op.meta(op.input(0), op.input(1));
  return op.launch("div", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
}

at::Tensor & div_(at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_div_out> op(self, {other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::div_(self, other);
  }
  op.meta(op.self(), op.input(0));
  op.launch("div_", [](auto& op) { op.impl(op.self(), op.input(0), op.self()); });
  return self;
}

}  // namespace foo
