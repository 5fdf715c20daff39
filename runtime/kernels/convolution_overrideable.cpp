// Kernels of aten::convolution_overrideable for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/convolution_overrideable.h"

#include <c10/util/Exception.h>

#include <ATen/ops/convolution.h>
#include "kernel_support.h"
#include "memory_access.h"

namespace foo {

at::Tensor convolution_overrideable(const at::Tensor & input, const at::Tensor & weight, const ::std::optional<at::Tensor> & bias, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  namespace rt = scaffold::runtime;
  // at::_convolution sends every foo tensor here (ConvBackend::Overrideable), after checking the
  // shapes. On host views the same call picks the CPU's own backend (mkldnn, slow_conv2d, ...).
  TORCH_CHECK(input.dim() >= 3, "convolution_overrideable: expected an input with a batch and a channel dimension, got ", input.dim(), " dimension(s)");
  const rt::KernelCall call("convolution_overrideable", input, "input");
  const at::Tensor host_result = at::convolution(
      call.input(input, "input"), call.input(weight, "weight"), call.input(bias, "bias"),
      stride, padding, dilation, transposed, output_padding, groups);
  at::Tensor result = rt::allocate(host_result.sizes(), host_result.scalar_type(), call.device());
  rt::host_view(result).copy_(host_result);
  return result;
}

}  // namespace foo
