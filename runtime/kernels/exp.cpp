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
  op.impl(op.input(0), op.output());
  return op.result();
}

at::Tensor & exp_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::InplaceElementwise e(self, {});
  if (!e.native()) {
    return at::compositeexplicitautogradnonfunctional::exp_(self);
  }
  at::cpu::exp_(e.self());
  return self;
}

}  // namespace foo
