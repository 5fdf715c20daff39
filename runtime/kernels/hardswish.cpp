// Kernels of aten::hardswish for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/hardswish.h"

#include <c10/util/Exception.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/hardswish_cpu_dispatch.h>
#include "host_kernel_launch.h"
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
  // Launched for a dense tensor (the in-place activation of a mobile network's blocks). What the
  // CPU kernel refuses without reading data (a dtype it has no loop for) is raised here first, by
  // the same kernel on a 0-dim host twin. Other layouts run inline, where the CPU kernel does
  // every check.
  if (self.is_non_overlapping_and_dense()) {
    rt::HostKernelLaunch launch({self});
    if (launch.native()) {
      at::Tensor twin = at::empty({}, self.options().device(c10::kCPU));
      at::cpu::hardswish_(twin);
      launch.run("hardswish_", [](const rt::HostViews& in) {
        at::Tensor host_self = in[0];
        at::cpu::hardswish_(host_self);
        return std::make_tuple();
      });
      return self;
    }
  }
  rt::InplaceElementwise e(self, {});
  if (!e.native()) {
    const rt::KernelCall call("hardswish_", self, "self"); // raises the layout error
  }
  at::cpu::hardswish_(e.self());
  return self;
}

}  // namespace foo
