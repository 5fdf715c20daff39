// Kernels of aten::convolution_backward_overrideable for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/convolution_backward_overrideable.h"

#include <c10/util/Exception.h>

#include <ATen/ops/convolution_backward.h>
#include "kernel_support.h"
#include "memory_access.h"

namespace foo {
namespace {

// A device copy of a gradient the CPU computed; undefined stays undefined (output_mask off).
at::Tensor to_device(const at::Tensor& host, c10::Device device) {
  if (!host.defined()) {
    return host;
  }
  at::Tensor result = scaffold::runtime::allocate(host.sizes(), host.scalar_type(), device);
  scaffold::runtime::host_view(result).copy_(host);
  return result;
}

}  // namespace

::std::tuple<at::Tensor,at::Tensor,at::Tensor> convolution_backward_overrideable(const at::Tensor & grad_output, const at::Tensor & input, const at::Tensor & weight, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups, ::std::array<bool,3> output_mask) {
  namespace rt = scaffold::runtime;
  // at::convolution_backward sends every foo tensor here. The bias gradient's size is the
  // number of output channels: weight is (out, in/groups, ...), or (in, out/groups, ...) when
  // transposed.
  TORCH_CHECK(weight.dim() >= 3, "convolution_backward_overrideable: expected a weight with at least 3 dimensions, got ", weight.dim());
  const rt::KernelCall call("convolution_backward_overrideable", grad_output, "grad_output");
  const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
  const std::array<int64_t, 1> bias_sizes{out_channels};
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      call.input(grad_output, "grad_output"), call.input(input, "input"),
      call.input(weight, "weight"), at::IntArrayRef(bias_sizes), stride, padding, dilation,
      transposed, output_padding, groups, output_mask);
  return {to_device(grad_input, call.device()), to_device(grad_weight, call.device()),
          to_device(grad_bias, call.device())};
}

}  // namespace foo
