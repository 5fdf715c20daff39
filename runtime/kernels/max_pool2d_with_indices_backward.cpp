// Kernels of aten::max_pool2d_with_indices_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/max_pool2d_with_indices_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/max_pool2d_with_indices_backward_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/max_pool2d_with_indices_backward_cpu_dispatch.h>
#include <ATen/ops/max_pool2d_with_indices_backward_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor max_pool2d_with_indices_backward(const at::Tensor & grad_output, const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, const at::Tensor & indices) {
  namespace rt = scaffold::runtime;
  // The CPU kernel reads indices as int64 and checks only their shape.
  TORCH_CHECK(indices.scalar_type() == at::kLong, "max_pool2d_with_indices_backward: expected int64 indices, got ", indices.scalar_type());
  rt::StructuredFunctional<at::native::structured_max_pool2d_with_indices_backward_out_cpu> op({grad_output, self, indices});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  }
  op.meta(op.input(0), op.input(1), kernel_size, stride, padding, dilation, ceil_mode, op.input(2));
  // Launched: an index out of range is reported at the next synchronisation.
  return op.launch("max_pool2d_with_indices_backward",
      [kernel = kernel_size.vec(), step = stride.vec(), pad = padding.vec(), dil = dilation.vec(), ceil_mode](auto& op) {
        op.impl(op.input(0), op.input(1), kernel, step, pad,
                dil, ceil_mode, op.input(2), op.output());
      });
}

at::Tensor & max_pool2d_with_indices_backward_out(const at::Tensor & grad_output, const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode, const at::Tensor & indices, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(indices.scalar_type() == at::kLong, "max_pool2d_with_indices_backward.grad_input: expected int64 indices, got ", indices.scalar_type());
  const rt::KernelCall call("max_pool2d_with_indices_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::max_pool2d_with_indices_backward_out(o.host(), call.device_input(grad_output, "grad_output"), call.device_input(self, "self"),
                                                kernel_size, stride, padding, dilation, ceil_mode, call.device_input(indices, "indices"));
  return o.commit();
}

}  // namespace foo
