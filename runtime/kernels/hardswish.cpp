// Kernels of aten::hardswish for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardswish.h"

#include <c10/util/Exception.h>

#include <ATen/ops/hardswish_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor hardswish(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // ATen's hardswish is not structured: the CPU kernel is a unary TensorIterator op.
  rt::Elementwise e({self}, self.scalar_type());
  if (e.fast()) {
    return e.launch("hardswish", [](rt::Elementwise& e) { at::cpu::hardswish_out(e.out(), e.input(0)); });
  }
  if (!e.native()) {
    const rt::KernelCall call("hardswish", self, "self"); // raises the layout error
  }
  // Other layouts: the CPU kernel decides the result's strides.
  return e.adopt(at::cpu::hardswish(e.input(0)));
}

at::Tensor & hardswish_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("hardswish.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::hardswish_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor & hardswish_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  rt::InplaceElementwise e(self, {});
  if (!e.native()) {
    const rt::KernelCall call("hardswish_", self, "self"); // raises the layout error
  }
  at::cpu::hardswish_(e.self());
  return self;
}

}  // namespace foo
