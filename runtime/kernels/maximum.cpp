// Kernels of aten::maximum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/maximum.h"

#include <c10/util/Exception.h>

#include <ATen/ops/maximum_cpu_dispatch.h>
#include <ATen/ops/maximum_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/maximum_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & maximum_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("maximum.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::maximum_out(o.host(), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

at::Tensor maximum(const at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_maximum_out> op({self, other});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::maximum(self, other);
  }
  op.keeps_integral_inputs();
  op.meta(op.input(0), op.input(1));
  return op.launch("maximum", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
}

}  // namespace foo
