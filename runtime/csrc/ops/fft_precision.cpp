// The FFT functions on half-precision tensors, as CUDA computes them.
//
// torch.fft's functions and stft are composites (CompositeImplicitAutograd)
// that pick the dtype the transform runs in before any backend kernel is
// reached, and accept float16 on CUDA and meta tensors only (bfloat16 too,
// from torch 2.15, promoted to float32; XPU too). On any other device they
// raise "Unsupported dtype Half": the CPU fallback never sees the call, so
// its dtype coverage (fallback/dtype_fallback.h) cannot help. Library code
// that runs spectral transforms in half precision on "not the CPU" fails on
// this device only.
//
// This file registers the composites for the backend's keys, with CUDA's
// rule for their dtypes:
//   * float16: computed in float32, the results rounded back once to
//     float16 or complex32 (what CUDA returns; cuFFT's half transforms
//     accumulate in float32 too). cuFFT takes only power-of-two signal
//     sizes in half precision; the device takes any, computing in float32.
//   * bfloat16 (torch 2.15 on): promoted to float32, the results left in
//     float32 and complex64, as CUDA's are (there is no complex bfloat16).
//   * every other dtype: PyTorch's composite itself, unchanged.
// The functions are registered under the autograd key too: a registration
// for the backend key alone would hide the composite from autograd (the
// dispatcher uses a composite for the autograd key only where the backend
// has no kernel of its own). The casts and the composite's ops are
// differentiable, so gradients flow to the half-precision input.
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include "torch_compat.h"

namespace scaffold::runtime {
namespace {

// The dtype CUDA computes a transform of `dtype` in, where that is not
// `dtype` and the composite refuses `dtype` on other devices.
std::optional<at::ScalarType> computed_in(at::ScalarType dtype) {
  if (dtype == at::kHalf) {
    return at::kFloat;
  }
#if !SCAFFOLD_TORCH_OLDER_THAN(2, 15)
  if (dtype == at::kBFloat16) {
    return at::kFloat;
  }
#endif
  return std::nullopt;
}

// float16's results go back to the half types; bfloat16's stay as computed.
at::ScalarType result_dtype(at::ScalarType input, at::ScalarType computed) {
  if (input != at::kHalf) {
    return computed;
  }
  return at::isComplexType(computed) ? at::kComplexHalf : at::kHalf;
}

// An out= tensor of a half type receives a result computed in the wider type.
at::ScalarType out_dtype_computed_in(at::ScalarType out) {
  if (out == at::kHalf) {
    return at::kFloat;
  }
  return out == at::kComplexHalf ? at::kComplexFloat : out;
}

void run_composite(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  op.callBoxedForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd, *stack);
}

// Boxed, for every op below: `self` is the first argument of each; stft's
// window is the other floating tensor an op takes, and goes with `self`.
void fft_in_cuda_precision(const c10::OperatorHandle& op, c10::DispatchKeySet /*keys*/, torch::jit::Stack* stack) {
  const auto& arguments = op.schema().arguments();
  const size_t first = stack->size() - arguments.size();
  const at::ScalarType input_dtype = (*stack)[first].toTensor().scalar_type();
  const std::optional<at::ScalarType> computed = computed_in(input_dtype);
  if (!computed) {
    run_composite(op, stack);
    return;
  }
  std::optional<at::Tensor> out;
  bool writes_out = false;
  for (size_t index = 0; index < arguments.size(); ++index) {
    c10::IValue& value = (*stack)[first + index];
    if (!value.isTensor()) {
      continue;
    }
    at::Tensor tensor = value.toTensor();
    const auto* alias = arguments[index].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      writes_out = true;
      const at::ScalarType wide = out_dtype_computed_in(tensor.scalar_type());
      if (wide != tensor.scalar_type()) {
        out = tensor;
        value = at::empty({0}, tensor.options().dtype(wide));
      }
    } else if (tensor.scalar_type() == input_dtype) {
      value = tensor.to(*computed);
    }
  }
  run_composite(op, stack);
  const size_t returns = op.schema().returns().size();
  for (size_t index = stack->size() - returns; index < stack->size(); ++index) {
    c10::IValue& value = (*stack)[index];
    const at::Tensor result = value.toTensor();
    if (out) {
      at::native::resize_output(*out, result.sizes());
      out->copy_(result);
      value = *out;
    } else if (!writes_out) {
      const at::ScalarType dtype = result_dtype(input_dtype, result.scalar_type());
      if (dtype != result.scalar_type()) {
        value = result.to(dtype);
      }
    }
  }
}

constexpr const char* kTransforms[] = {
    "fft_fft",   "fft_ifft",   "fft_rfft",   "fft_irfft",   "fft_hfft",   "fft_ihfft",
    "fft_fft2",  "fft_ifft2",  "fft_rfft2",  "fft_irfft2",  "fft_hfft2",  "fft_ihfft2",
    "fft_fftn",  "fft_ifftn",  "fft_rfftn",  "fft_irfftn",  "fft_hfftn",  "fft_ihfftn",
};

// Each of torch.fft's transforms in its functional and out= forms, and stft.
void register_in_cuda_precision(torch::Library& m) {
  for (const char* transform : kTransforms) {
    m.impl(transform, torch::CppFunction::makeFromBoxedFunction<&fft_in_cuda_precision>());
    m.impl((std::string(transform) + ".out").c_str(),
           torch::CppFunction::makeFromBoxedFunction<&fft_in_cuda_precision>());
  }
  m.impl("stft", torch::CppFunction::makeFromBoxedFunction<&fft_in_cuda_precision>());
  m.impl("stft.center", torch::CppFunction::makeFromBoxedFunction<&fft_in_cuda_precision>());
}

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  scaffold::runtime::register_in_cuda_precision(m);
}
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  scaffold::runtime::register_in_cuda_precision(m);
}
