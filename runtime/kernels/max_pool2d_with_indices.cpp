// Kernels of aten::max_pool2d_with_indices for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/max_pool2d_with_indices.h"

#include <c10/util/Exception.h>

#include <ATen/ops/empty_strided.h>
#include <ATen/ops/max_pool2d_with_indices_cpu_dispatch.h>
#include <ATen/ops/max_pool2d_with_indices_meta_dispatch.h>
#include "core_ops.h"
#include "kernel_support.h"
#include "memory_access.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor> max_pool2d_with_indices(const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  namespace rt = scaffold::runtime;
  rt::FunctionalOperands op({self});
  if (!op.native()) {
    const rt::KernelCall call("max_pool2d_with_indices", self, "self"); // raises the layout error
  }
  // ATen's meta function, on a twin of self without data: the CPU's checks, raised here, and the
  // sizes and memory format of both results.
  const auto [out_shape, indices_shape] = at::meta::max_pool2d_with_indices(
      at::empty_strided(self.sizes(), self.strides(), self.options().device(at::kMeta)), kernel_size, stride, padding, dilation, ceil_mode);
  op.make_output(out_shape.sizes(), out_shape.strides(), out_shape.options());
  at::Tensor indices = rt::empty_strided(indices_shape.sizes(), indices_shape.strides(), at::kLong, c10::kStrided, op.device(), std::nullopt);
  at::Tensor out = op.launch("max_pool2d_with_indices",
      [indices = rt::launch_host_view(indices), kernel = kernel_size.vec(), step = stride.vec(),
       pad = padding.vec(), dil = dilation.vec(), ceil_mode](rt::FunctionalOperands& op) {
        at::Tensor indices_view = indices;
        at::cpu::max_pool2d_with_indices_out(op.output(), indices_view, op.input(0), kernel,
                                             step, pad, dil, ceil_mode);
      });
  return {out, indices};
}

::std::tuple<at::Tensor &,at::Tensor &> max_pool2d_with_indices_out(const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, at::Tensor & out, at::Tensor & indices) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("max_pool2d_with_indices.out", out);
  rt::OutputView o = call.output(out);
  rt::OutputView i = call.output(indices, "indices");
  at::cpu::max_pool2d_with_indices_out(o.host(), i.host(), call.device_input(self, "self"), kernel_size, stride, padding, dilation, ceil_mode);
  return {o.commit(), i.commit()};
}

}  // namespace foo
