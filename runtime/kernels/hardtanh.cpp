// Kernels of aten::hardtanh for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardtanh.h"

#include <c10/util/Exception.h>

#include <ATen/ops/empty_like.h>
#include <ATen/ops/hardtanh_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & hardtanh_out(const at::Tensor & self, const at::Scalar & min_val, const at::Scalar & max_val, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("hardtanh.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::hardtanh_out(o.host(), call.input(self, "self"), min_val, max_val);
  return o.commit();
}

at::Tensor hardtanh(const at::Tensor & self, const at::Scalar & min_val, const at::Scalar & max_val) {
  // As the CPU's: hardtanh.out into a result like self.
  at::Tensor result = at::empty_like(self);
  return foo::hardtanh_out(self, min_val, max_val, result);
}

at::Tensor & hardtanh_(at::Tensor & self, const at::Scalar & min_val, const at::Scalar & max_val) {
  namespace rt = scaffold::runtime;
  rt::InplaceElementwise e(self, {});
  if (!e.native()) {
    const rt::KernelCall call("hardtanh_", self, "self"); // raises the layout error
  }
  at::cpu::hardtanh_(e.self(), min_val, max_val);
  return self;
}

}  // namespace foo
