// Kernels of aten::log for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/log.h"

#include <c10/util/Exception.h>

#include <ATen/ops/log_cpu_dispatch.h>
#include <ATen/ops/log_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/log_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & log_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("log.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::log_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor log(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_log_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::log(self);
  }
  op.meta(op.input(0));
  return op.launch("log", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & log_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_log_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::log_(self);
  }
  op.meta(op.self());
  op.launch("log_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
