// Kernels of aten::ceil for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/ceil.h"

#include <c10/util/Exception.h>

#include <ATen/ops/ceil_cpu_dispatch.h>
#include <ATen/ops/ceil_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/ceil_native.h>
#include "kernel_support.h"

namespace foo {

namespace {

// Launched for the dtypes the CPU kernel computes: it copies an integral tensor and has loops for
// the floating types; the others (bool, float8) it raises for when it runs -- inline, here, at
// the call.
bool launches(const at::Tensor& self) {
  const at::ScalarType t = self.scalar_type();
  return c10::isIntegralType(t, /*includeBool=*/false) || t == at::kFloat || t == at::kDouble ||
      t == at::kHalf || t == at::kBFloat16;
}

}  // namespace

at::Tensor & ceil_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  if (launches(self)) {
    rt::StructuredOut<at::native::structured_ceil_out> op(out, {self});
    if (op.native()) {
      op.keeps_integral_inputs();
      op.meta(op.input(0));
      if (op.fits()) {
        op.launch("ceil.out", [](auto& op) { op.impl(op.input(0), op.output()); });
        return out;
      }
    }
  }
  // out must be resized first, an argument is on another device, or a dtype the CPU refuses.
  const rt::KernelCall call("ceil.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::ceil_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor ceil(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  if (launches(self)) {
    rt::StructuredFunctional<at::native::structured_ceil_out> op({self});
    if (op.native()) {
      op.keeps_integral_inputs();
      op.meta(op.input(0));
      return op.launch("ceil", [](auto& op) { op.impl(op.input(0), op.output()); });
    }
  }
  return at::compositeexplicitautogradnonfunctional::ceil(self);
}

at::Tensor & ceil_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  if (launches(self)) {
    rt::StructuredInplace<at::native::structured_ceil_out> op(self, {});
    if (op.native()) {
      op.keeps_integral_inputs();
      op.meta(op.self());
      op.launch("ceil_", [](auto& op) { op.impl(op.self(), op.self()); });
      return self;
    }
  }
  return at::compositeexplicitautogradnonfunctional::ceil_(self);
}

}  // namespace foo
