// Kernels of aten::avg_pool2d for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/avg_pool2d.h"

#include <c10/util/Exception.h>

#include <ATen/ops/avg_pool2d_cpu_dispatch.h>
#include <ATen/ops/avg_pool2d_meta_dispatch.h>
#include <ATen/ops/empty_strided.h>
#include "kernel_support.h"

namespace foo {

at::Tensor avg_pool2d(const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad, ::std::optional<int64_t> divisor_override) {
  namespace rt = scaffold::runtime;
  rt::FunctionalOperands op({self});
  if (!op.native()) {
    const rt::KernelCall call("avg_pool2d", self, "self"); // raises the layout error
  }
  // ATen's meta function on a twin of self without data: the CPU's checks, raised here, and the
  // result's sizes and memory format.
  const at::Tensor shape = at::meta::avg_pool2d(at::empty_strided(self.sizes(), self.strides(), self.options().device(at::kMeta)),
                                                kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  op.make_output(shape.sizes(), shape.strides(), shape.options());
  return op.launch("avg_pool2d",
      [kernel = kernel_size.vec(), step = stride.vec(), pad = padding.vec(), ceil_mode, count_include_pad,
       divisor_override](rt::FunctionalOperands& op) {
        at::cpu::avg_pool2d_out(op.output(), op.input(0), kernel, step,
                                pad, ceil_mode, count_include_pad, divisor_override);
      });
}

at::Tensor & avg_pool2d_out(const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad, ::std::optional<int64_t> divisor_override, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("avg_pool2d.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::avg_pool2d_out(o.host(), call.device_input(self, "self"), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  return o.commit();
}

}  // namespace foo
