// The convolutions every out-of-tree backend must provide (core_ops.h): the
// CPU's convolutions on host views, results copied to the device. A backend
// with its own convolution kernels replaces its kernel files' one-line
// forwards to these.
#include "core_ops.h"

#include <array>

#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <c10/util/Exception.h>

#include "kernel_support.h"
#include "memory_access.h"

namespace scaffold::runtime {

at::Tensor convolution_overrideable(const at::Tensor & input, const at::Tensor & weight, const ::std::optional<at::Tensor> & bias, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  // at::_convolution sends every tensor of this backend here (ConvBackend::Overrideable), after checking the
  // shapes. On host views the same call picks the CPU's own backend (mkldnn, slow_conv2d, ...).
  TORCH_CHECK(input.dim() >= 3, "convolution_overrideable: expected an input with a batch and a channel dimension, got ", input.dim(), " dimension(s)");
  const KernelCall call("convolution_overrideable", input, "input");
  const at::Tensor host_result = at::convolution(
      call.input(input, "input"), call.input(weight, "weight"), call.input(bias, "bias"),
      stride, padding, dilation, transposed, output_padding, groups);
  at::Tensor result = allocate(host_result.sizes(), host_result.scalar_type(), call.device());
  host_view(result).copy_(host_result);
  return result;
}

namespace {

// A device copy of a gradient the CPU computed; undefined stays undefined (output_mask off).
at::Tensor to_device(const at::Tensor& host, c10::Device device) {
  if (!host.defined()) {
    return host;
  }
  at::Tensor result = allocate(host.sizes(), host.scalar_type(), device);
  host_view(result).copy_(host);
  return result;
}

} // namespace

::std::tuple<at::Tensor,at::Tensor,at::Tensor> convolution_backward_overrideable(const at::Tensor & grad_output, const at::Tensor & input, const at::Tensor & weight, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups, ::std::array<bool,3> output_mask) {
  // at::convolution_backward sends every tensor of this backend here. The bias gradient's size is the
  // number of output channels: weight is (out, in/groups, ...), or (in, out/groups, ...) when
  // transposed.
  TORCH_CHECK(weight.dim() >= 3, "convolution_backward_overrideable: expected a weight with at least 3 dimensions, got ", weight.dim());
  const KernelCall call("convolution_backward_overrideable", grad_output, "grad_output");
  const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
  const std::array<int64_t, 1> bias_sizes{out_channels};
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      call.input(grad_output, "grad_output"), call.input(input, "input"),
      call.input(weight, "weight"), at::IntArrayRef(bias_sizes), stride, padding, dilation,
      transposed, output_padding, groups, output_mask);
  return {to_device(grad_input, call.device()), to_device(grad_weight, call.device()),
          to_device(grad_bias, call.device())};
}

} // namespace scaffold::runtime
