// Kernels of aten::avg_pool2d_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/avg_pool2d_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/avg_pool2d_backward_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/avg_pool2d_backward_cpu_dispatch.h>
#include <ATen/ops/avg_pool2d_backward_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor avg_pool2d_backward(const at::Tensor & grad_output, const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad, ::std::optional<int64_t> divisor_override) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_avg_pool2d_backward_out_cpu> op({grad_output, self});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  }
  op.meta(op.input(0), op.input(1), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  return op.launch("avg_pool2d_backward",
      [kernel = kernel_size.vec(), step = stride.vec(), pad = padding.vec(), ceil_mode, count_include_pad,
       divisor_override](auto& op) {
        op.impl(op.input(0), op.input(1), kernel, step, pad,
                ceil_mode, count_include_pad, divisor_override, op.output());
      });
}

at::Tensor & avg_pool2d_backward_out(const at::Tensor & grad_output, const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad, ::std::optional<int64_t> divisor_override, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("avg_pool2d_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::avg_pool2d_backward_out(o.host(), call.device_input(grad_output, "grad_output"), call.device_input(self, "self"),
                                   kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  return o.commit();
}

}  // namespace foo
