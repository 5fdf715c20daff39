// The convolutions every out-of-tree backend must provide (core_ops.h): the
// CPU's convolutions on host views, results copied to the device. A backend
// with its own convolution kernels replaces its kernel files' one-line
// forwards to these.
//
// They are launched on the stream (launch.h) whenever the result's shape is
// known from the arguments -- every call at::_convolution and
// at::convolution_backward make. Besides returning at once, that keeps the
// device's compute on the stream's worker: run inline, a convolution ran on
// whichever thread called it (autograd runs the backward pass on a thread of
// its own), and on a CPU-simulated device each such thread brings its own
// OpenMP team, which then competes for the same cores with the worker's.
// Anything else (a direct call with unexpanded or mismatched arguments) runs
// inline, where the CPU kernel raises its own error at the call.
//
// Results are laid out as the CPU's oneDNN convolutions lay out theirs (and
// cuDNN on CUDA): channels-last when the input or the weight is. A network
// that runs channels-last (ConvNeXt's permuted layer norms make it so) then
// stays channels-last, rather than converting every activation twice per
// convolution. PyTorch plans an Overrideable convolution's result contiguous;
// the package's Python side tells torch.compile's planning the same rule
// (python/torch_foo/_convolution_layout.py), so eager and compiled results agree.
#include "core_ops.h"

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/native/ConvUtils.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <c10/util/Exception.h>

#include "allocator.h"
#include "functional_operands.h"
#include "host_kernel_launch.h"
#include "kernel_support.h"
#include "launch.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

// The layout of a convolution's results (the output, the input and weight gradients).
at::MemoryFormat result_format(const at::Tensor& input, const at::Tensor& weight) {
  return at::native::_determine_backend_memory_format(input, weight, at::native::ConvBackend::Mkldnn);
}

// A device copy, in `format`, of a result the CPU computed inline; undefined stays undefined (an
// output_mask off).
at::Tensor to_device(const at::Tensor& host, c10::Device device, at::MemoryFormat format) {
  if (!host.defined()) {
    return host;
  }
  at::Tensor result = empty(host.sizes(), host.scalar_type(), c10::kStrided, device, std::nullopt, format);
  if (device_memory_is_host_addressable()) {
    host_view(result).copy_(host);
  } else {
    result.copy_(host); // through the driver
  }
  return result;
}

// An operand on the CPU, for a convolution computed there on a device whose memory the host
// cannot address (a copy through the driver); undefined stays undefined.
at::Tensor to_cpu(const at::Tensor& t) {
  return t.defined() ? t.cpu() : t;
}

// A convolution's arguments, owned: launched work outlives the caller's arrays.
struct ConvolutionParams {
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  bool transposed;
  std::vector<int64_t> output_padding;
  int64_t groups;
};

// Small convolutions without groups (pointwise ones, mostly) compute on one
// thread: oneDNN splits even a 0.15 MMAC 1x1 convolution across every
// thread, and its forward and backward took 150 us on two threads of this
// 2-core machine against 35 on one, while depthwise and grouped ones of the
// same size gain from two. ShuffleNet's and MobileNet's steps: 1-4 ms less.
constexpr double kOneThreadConvolutionMacs = 1.5e6;

// Called in the launched work, on host views (the input, the output or its
// gradient, the weight).
void limit_small_convolution(
    const at::Tensor& input, const at::Tensor& output, const at::Tensor& weight, const ConvolutionParams& p) {
  if (p.groups != 1 || weight.dim() == 0 || weight.size(0) == 0) {
    return;
  }
  // Each output element is a dot product over one filter (each input element, when transposed).
  const at::Tensor& per_filter = p.transposed ? input : output;
  const double macs =
      static_cast<double>(per_filter.numel()) * static_cast<double>(weight.numel() / weight.size(0));
  if (macs < kOneThreadConvolutionMacs) {
    limit_launched_threads(1);
  }
}

// The result's sizes, when the arguments are the checked, expanded and batched ones ATen's
// convolution entry points pass: one value per spatial dimension, channels that match, a
// non-empty input and one dtype. Otherwise nullopt: the call runs inline and the CPU kernel
// judges it.
std::optional<std::vector<int64_t>> launchable_output_sizes(
    const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
    const ConvolutionParams& p) {
  const int64_t dim = input.dim();
  const auto spatial = static_cast<size_t>(dim - 2);
  if (weight.dim() != dim || input.numel() == 0 || input.scalar_type() != weight.scalar_type() ||
      (bias.has_value() && bias->defined() && bias->scalar_type() != input.scalar_type()) || p.groups < 1 ||
      p.stride.size() != spatial || p.padding.size() != spatial || p.dilation.size() != spatial ||
      (p.transposed && p.output_padding.size() != spatial)) {
    return std::nullopt;
  }
  const int64_t in_channels = p.transposed ? weight.size(0) : weight.size(1) * p.groups;
  if (input.size(1) != in_channels) {
    return std::nullopt;
  }
  std::vector<int64_t> sizes{input.size(0), p.transposed ? weight.size(1) * p.groups : weight.size(0)};
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t in = input.size(static_cast<int64_t>(d) + 2);
    const int64_t extent = p.dilation[d] * (weight.size(static_cast<int64_t>(d) + 2) - 1) + 1;
    if (p.stride[d] < 1 || p.dilation[d] < 1 || p.padding[d] < 0) {
      return std::nullopt;
    }
    int64_t out = 0;
    if (p.transposed) {
      out = (in - 1) * p.stride[d] - 2 * p.padding[d] + extent + p.output_padding[d];
    } else {
      const int64_t span = in + 2 * p.padding[d] - extent;
      out = span < 0 ? 0 : span / p.stride[d] + 1;
    }
    if (out < 1) {
      return std::nullopt;
    }
    sizes.push_back(out);
  }
  return sizes;
}

std::optional<at::Tensor> launch_convolution(
    const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
    ConvolutionParams params) {
  const std::optional<std::vector<int64_t>> sizes = launchable_output_sizes(input, weight, bias, params);
  if (!sizes.has_value()) {
    return std::nullopt;
  }
  const bool has_bias = bias.has_value() && bias->defined();
  FunctionalOperands operands = has_bias ? FunctionalOperands({input, weight, *bias}) : FunctionalOperands({input, weight});
  if (!operands.native()) {
    return std::nullopt;
  }
  // The copy into it takes the CPU result's layout, whichever backend the CPU picked.
  operands.make_output(*sizes, {}, input.options().memory_format(result_format(input, weight)));
  return operands.launch("convolution_overrideable", [p = std::move(params), has_bias](FunctionalOperands& op) {
    limit_small_convolution(op.input(0), op.output(), op.input(1), p);
    const at::Tensor host_result = at::convolution(
        op.input(0), op.input(1), has_bias ? std::optional<at::Tensor>(op.input(2)) : std::nullopt,
        p.stride, p.padding, p.dilation, p.transposed, p.output_padding, p.groups);
    op.output().copy_(host_result);
  });
}

} // namespace

at::Tensor convolution_overrideable(const at::Tensor & input, const at::Tensor & weight, const ::std::optional<at::Tensor> & bias, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  // at::_convolution sends every tensor of this backend here (ConvBackend::Overrideable), after checking the
  // shapes. On host views the same call picks the CPU's own backend (mkldnn, slow_conv2d, ...).
  TORCH_CHECK(input.dim() >= 3, "convolution_overrideable: expected an input with a batch and a channel dimension, got ", input.dim(), " dimension(s)");
  if (!device_memory_is_host_addressable()) {
    // No host views: the CPU computes on copies (the copying fallback cannot: the CPU has no
    // convolution_overrideable).
    const at::Tensor host_result = at::convolution(
        to_cpu(input), to_cpu(weight), bias.has_value() ? std::optional<at::Tensor>(to_cpu(*bias)) : std::nullopt,
        stride, padding, dilation, transposed, output_padding, groups);
    return to_device(host_result, input.device(), result_format(input, weight));
  }
  if (std::optional<at::Tensor> launched = launch_convolution(
          input, weight, bias,
          ConvolutionParams{stride.vec(), padding.vec(), dilation.vec(), transposed, output_padding.vec(), groups})) {
    return *std::move(launched);
  }
  const KernelCall call("convolution_overrideable", input, "input");
  const at::Tensor host_result = at::convolution(
      call.input(input, "input"), call.input(weight, "weight"), call.input(bias, "bias"),
      stride, padding, dilation, transposed, output_padding, groups);
  return to_device(host_result, call.device(), result_format(input, weight));
}

namespace {

using Gradients = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

std::optional<Gradients> launch_convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, int64_t out_channels,
    ConvolutionParams params, std::array<bool, 3> output_mask) {
  const std::optional<std::vector<int64_t>> sizes = launchable_output_sizes(input, weight, std::nullopt, params);
  if (!sizes.has_value() || grad_output.sizes() != at::IntArrayRef(*sizes) ||
      grad_output.scalar_type() != input.scalar_type()) {
    return std::nullopt;
  }
  HostKernelLaunch launch({grad_output, input, weight});
  if (!launch.native()) {
    return std::nullopt;
  }
  const std::array<int64_t, 1> bias_sizes{out_channels};
  const at::MemoryFormat format = result_format(input, weight);
  Gradients gradients{
      launch.result(input.sizes(), input.scalar_type(), format, output_mask[0]),
      launch.result(weight.sizes(), input.scalar_type(), format, output_mask[1]),
      launch.result(bias_sizes, input.scalar_type(), at::MemoryFormat::Contiguous, output_mask[2])};
  launch.run("convolution_backward_overrideable",
             [p = std::move(params), bias_sizes, output_mask](const HostViews& in) {
               limit_small_convolution(in[1], in[0], in[2], p);
               return at::convolution_backward(
                   in[0], in[1], in[2], at::IntArrayRef(bias_sizes), p.stride, p.padding, p.dilation,
                   p.transposed, p.output_padding, p.groups, output_mask);
             });
  return gradients;
}

} // namespace

::std::tuple<at::Tensor,at::Tensor,at::Tensor> convolution_backward_overrideable(const at::Tensor & grad_output, const at::Tensor & input, const at::Tensor & weight, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups, ::std::array<bool,3> output_mask) {
  // at::convolution_backward sends every tensor of this backend here. The bias gradient's size is the
  // number of output channels: weight is (out, in/groups, ...), or (in, out/groups, ...) when
  // transposed.
  TORCH_CHECK(weight.dim() >= 3, "convolution_backward_overrideable: expected a weight with at least 3 dimensions, got ", weight.dim());
  const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
  if (!device_memory_is_host_addressable()) {
    const std::array<int64_t, 1> bias_sizes{out_channels};
    auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
        to_cpu(grad_output), to_cpu(input), to_cpu(weight), at::IntArrayRef(bias_sizes), stride, padding, dilation,
        transposed, output_padding, groups, output_mask);
    const at::MemoryFormat format = result_format(input, weight);
    return {to_device(grad_input, input.device(), format), to_device(grad_weight, input.device(), format),
            to_device(grad_bias, input.device(), at::MemoryFormat::Contiguous)};
  }
  if (std::optional<Gradients> launched = launch_convolution_backward(
          grad_output, input, weight, out_channels,
          ConvolutionParams{stride.vec(), padding.vec(), dilation.vec(), transposed, output_padding.vec(), groups},
          output_mask)) {
    return *std::move(launched);
  }
  const KernelCall call("convolution_backward_overrideable", grad_output, "grad_output");
  const std::array<int64_t, 1> bias_sizes{out_channels};
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      call.input(grad_output, "grad_output"), call.input(input, "input"),
      call.input(weight, "weight"), at::IntArrayRef(bias_sizes), stride, padding, dilation,
      transposed, output_padding, groups, output_mask);
  const at::MemoryFormat format = result_format(input, weight);
  return {to_device(grad_input, call.device(), format), to_device(grad_weight, call.device(), format),
          to_device(grad_bias, call.device(), at::MemoryFormat::Contiguous)};
}

} // namespace scaffold::runtime
