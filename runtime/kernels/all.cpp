// Kernels of aten::all for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/all.h"

#include <c10/util/Exception.h>

#include <ATen/ops/all_cpu_dispatch.h>
#include <ATen/ops/all_native.h>
#include "kernel_support.h"

namespace foo {

namespace {

// A reduction to bool of a non-complex tensor on out's device: meta() checks and sizes at the
// call, impl() launched. Other operands run inline, where the CPU kernel raises at the call.
bool launches(const at::Tensor& self, const at::Tensor& out) {
  return self.device() == out.device() && !c10::isComplexType(self.scalar_type());
}

}  // namespace

at::Tensor & all_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  if (launches(self, out)) {
    rt::StructuredOut<at::native::structured_all_all_out> op(out, {self});
    if (op.native()) {
      op.meta(op.input(0));
      if (op.fits()) {
        op.launch("all.all_out", [](auto& op) { op.impl(op.input(0), op.output()); });
        return out;
      }
    }
  }
  const rt::KernelCall call("all.all_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::all_out(o.host(), call.device_input(self, "self"));
  return o.commit();
}

at::Tensor & all_out(const at::Tensor & self, int64_t dim, bool keepdim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  if (launches(self, out)) {
    rt::StructuredOut<at::native::structured_all_out> op(out, {self});
    if (op.native()) {
      op.meta(op.input(0), dim, keepdim);
      if (op.fits()) {
        op.launch("all.out", [dim, keepdim](auto& op) { op.impl(op.input(0), dim, keepdim, op.output()); });
        return out;
      }
    }
  }
  const rt::KernelCall call("all.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::all_out(o.host(), call.device_input(self, "self"), dim, keepdim);
  return o.commit();
}

}  // namespace foo
