// Kernels of aten::rsqrt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/rsqrt.h"

#include <c10/util/Exception.h>

#include <ATen/ops/rsqrt_cpu_dispatch.h>
#include <ATen/ops/rsqrt_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/rsqrt_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & rsqrt_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("rsqrt.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::rsqrt_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor rsqrt(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_rsqrt_out> op({self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::rsqrt(self);
  }
  op.meta(op.input(0));
  return op.launch("rsqrt", [](auto& op) { op.impl(op.input(0), op.output()); });
}

at::Tensor & rsqrt_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_rsqrt_out> op(self, {});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::rsqrt_(self);
  }
  op.meta(op.self());
  op.launch("rsqrt_", [](auto& op) { op.impl(op.self(), op.self()); });
  return self;
}

}  // namespace foo
