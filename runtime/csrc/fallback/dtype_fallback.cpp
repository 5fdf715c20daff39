#include "dtype_fallback.h"

#include <cctype>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

namespace scaffold::runtime {
namespace {

// ---- The refusal -------------------------------------------------------------

// `word` in `text`, not as part of a longer identifier ('Int' is not in
// 'Integer').
bool contains_word(std::string_view text, std::string_view word) {
  const auto is_identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_identifier(text[at - 1])) && (end == text.size() || !is_identifier(text[end]))) {
      return true;
    }
  }
  return false;
}

template <typename Fn>
void for_each_tensor(const c10::IValue& value, Fn&& fn) {
  if (value.isTensor()) {
    fn(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorList()) {
      fn(t);
    }
  } else if (value.isOptionalTensorList()) {
    for (const std::optional<at::Tensor>& t : value.toOptionalTensorList()) {
      if (t.has_value()) {
        fn(*t);
      }
    }
  }
}

// The dtype of a tensor argument that the CPU kernel's NotImplementedError
// names ("... not implemented for 'Half'", "... does not support complex
// inputs"), if any: the refusal is then about that dtype, not about a layout
// or an op the CPU lacks altogether.
std::optional<at::ScalarType> refused_dtype(std::string_view message, c10::ArrayRef<c10::IValue> arguments) {
  std::optional<at::ScalarType> refused;
  for (const c10::IValue& argument : arguments) {
    for_each_tensor(argument, [&](const at::Tensor& t) {
      if (refused.has_value() || !t.defined()) {
        return;
      }
      const at::ScalarType dtype = t.scalar_type();
      // complex32's refusals may name its parts' type ("... of type: Half").
      if (contains_word(message, c10::toString(dtype)) ||
          (at::isComplexType(dtype) && (contains_word(message, "complex") || contains_word(message, "Complex"))) ||
          (dtype == at::kComplexHalf && contains_word(message, "Half"))) {
        refused = dtype;
      }
    });
  }
  return refused;
}

std::string dtype_name(at::ScalarType dtype) {
  return "torch." + std::string(c10::getDtypeNames(dtype).first);
}

[[noreturn]] void refuse(const char* device, const std::string& name, at::ScalarType dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      false,
      "'", name, "' does not support ", dtype_name(dtype), " on the '", device,
      "' device: the backend has no kernel for it in that dtype, and no exact computation in another dtype.");
}

// ---- Ops with a rule of their own ----------------------------------------------

// An int64 value as the integer dtype `dtype` holds it (wrapping, as C++'s
// conversion in CUDA's kernel does).
int64_t as_dtype(int64_t value, at::ScalarType dtype) {
  return at::scalar_tensor(value, at::kLong).to(dtype).item<int64_t>();
}

// histc of an integer tensor, binned as CUDA's kernel bins it: the bounds
// truncated to integers, the data's range where they are equal, and
// bin = (x - min) * bins / (max - min) in integer arithmetic, max in the last
// bin. Counts in the input's dtype.
at::Tensor histc_of_integers(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max) {
  TORCH_CHECK(bins > 0, "bins must be > 0");
  const at::ScalarType dtype = self.scalar_type();
  const at::Tensor values = self.to(at::kCPU).to(at::kLong).flatten();
  const int64_t min_bound = min.to<int64_t>();
  const int64_t max_bound = max.to<int64_t>();
  int64_t lo = as_dtype(min_bound, dtype);
  int64_t hi = as_dtype(max_bound, dtype);
  if (min_bound == max_bound && values.numel() > 0) {
    lo = values.min().item<int64_t>();
    hi = values.max().item<int64_t>();
  }
  if (lo == hi) {
    lo = as_dtype(lo - 1, dtype);
    hi = as_dtype(hi + 1, dtype);
  }
  TORCH_CHECK(lo < hi, "max must be larger than min");
  const at::Tensor inside = values.masked_select(values.ge(lo).logical_and_(values.le(hi)));
  const at::Tensor bin = inside.sub(lo).mul_(bins).div_(hi - lo, "floor").clamp_max_(bins - 1);
  return at::bincount(bin, std::nullopt, bins).to(dtype).to(self.device());
}

// nansum of a complex tensor: CUDA's kernel adds zero for an element with a
// NaN in either part (which zeroing the NaN parts of a real view would not).
at::Tensor zero_nans(const at::Tensor& self) {
  return self.masked_fill(at::isnan(self), 0);
}

// Whether `name` on a tensor of `dtype` is computed by a rule of this section:
// before the CPU kernel is tried, since the CPU's answer (or its refusal, which
// not every release raises as NotImplementedError) is not CUDA's.
bool has_rule(const std::string& name, at::ScalarType dtype) {
  return ((name == "aten::histc" || name == "aten::histc.out") && at::isIntegralType(dtype, /*includeBool=*/false)) ||
      ((name == "aten::nansum" || name == "aten::nansum.out") && at::isComplexType(dtype));
}

// Runs the ops of this section that `name` with `dtype` is; false for others.
bool run_by_rule(const std::string& name, at::ScalarType dtype, torch::jit::Stack& arguments, torch::jit::Stack* stack) {
  if ((name == "aten::histc" || name == "aten::histc.out") && at::isIntegralType(dtype, /*includeBool=*/false)) {
    const at::Tensor counts = histc_of_integers(
        arguments[0].toTensor(), arguments[1].toInt(), arguments[2].toScalar(), arguments[3].toScalar());
    if (name == "aten::histc") {
      stack->emplace_back(counts);
      return true;
    }
    at::Tensor out = arguments[4].toTensor();
    if (out.sizes() != counts.sizes()) {
      out.resize_(counts.sizes());
    }
    out.copy_(counts);
    stack->emplace_back(out);
    return true;
  }
  if ((name == "aten::nansum" || name == "aten::nansum.out") && at::isComplexType(dtype)) {
    const at::Tensor self = zero_nans(arguments[0].toTensor());
    const std::optional<std::vector<int64_t>> dim =
        arguments[1].isNone() ? std::nullopt : std::optional(arguments[1].toIntVector());
    const at::OptionalIntArrayRef dims = dim.has_value() ? at::OptionalIntArrayRef(*dim) : std::nullopt;
    const bool keepdim = arguments[2].toBool();
    const std::optional<at::ScalarType> result_dtype = arguments[3].toOptional<at::ScalarType>();
    if (name == "aten::nansum") {
      stack->emplace_back(at::sum(self, dims, keepdim, result_dtype));
      return true;
    }
    at::Tensor out = arguments[4].toTensor();
    at::sum_out(out, self, dims, keepdim, result_dtype);
    stack->emplace_back(out);
    return true;
  }
  return false;
}

// ---- Every other op: a wider dtype ---------------------------------------------

// The ops whose CUDA kernels take a dtype their CPU kernels refuse (OpInfo's
// CUDA dtype lists, torch 2.14-2.15; histc and nansum have rules above, the FFT
// primitives and grid samplers the up-front list below). Only these are
// computed in a wider dtype: any other refusal is CUDA's too, and the
// device refuses as CUDA does rather than answer where CUDA raises.
struct CudaDtypes {
  std::string_view op; // without the overload: every overload of it
  bool half; // float16
  bool bfloat16;
  bool boolean;
};
constexpr CudaDtypes kCudaOnlyDtypes[] = {
    {"aten::avg_pool3d", true, true, false},
    {"aten::avg_pool3d_backward", true, true, false},
    {"aten::_upsample_bilinear2d_aa", true, true, false},
    {"aten::_upsample_bilinear2d_aa_backward", true, true, false},
    {"aten::multi_margin_loss", true, true, false},
    {"aten::multi_margin_loss_backward", true, true, false},
    {"aten::multilabel_margin_loss_forward", true, true, false},
    {"aten::multilabel_margin_loss_backward", true, true, false},
    {"aten::native_batch_norm", true, true, false},
    {"aten::native_batch_norm_backward", true, true, false},
    {"aten::_native_batch_norm_legit", true, true, false},
    {"aten::_native_batch_norm_legit_no_training", true, true, false},
    {"aten::rrelu_with_noise", true, false, false},
    {"aten::round", true, false, false},
    {"aten::polygamma", true, false, false},
    {"aten::abs", false, false, true},
    {"aten::trace", false, false, true},
};

// The ops computed in float32 (complex64 for complex32) before the CPU kernel
// is tried, on the half types, where CUDA computes them so:
//   * the CPU's grid samplers take the half types and compute them wrongly,
//     coordinates included: the 2-d kernels (torch 2.14-2.15) give NaNs for
//     images of some hundred pixels a side and their backward corrupts the
//     heap; the 3-d ones are off by whole pixels;
//   * the CPU has no half-precision FFT, and its refusal is a RuntimeError in
//     some releases (2.11), which the refusal path below would not take for
//     one.
constexpr std::string_view kComputedWiderUpFront[] = {
    "aten::grid_sampler_2d",
    "aten::grid_sampler_2d_backward",
    "aten::grid_sampler_3d",
    "aten::grid_sampler_3d_backward",
    "aten::_fft_r2c",
    "aten::_fft_c2r",
    "aten::_fft_c2c",
};

// `name` without its overload: a list's entry stands for every overload.
std::string_view without_overload(const std::string& name) {
  return std::string_view(name).substr(0, name.find('.'));
}

bool computed_wider_up_front(const std::string& name, at::ScalarType dtype) {
  if (dtype != at::kHalf && dtype != at::kBFloat16 && dtype != at::kComplexHalf) {
    return false;
  }
  const std::string_view op = without_overload(name);
  for (const std::string_view listed : kComputedWiderUpFront) {
    if (listed == op) {
      return true;
    }
  }
  return false;
}

bool cuda_computes(const std::string& name, at::ScalarType dtype) {
  if (computed_wider_up_front(name, dtype)) {
    return true;
  }
  const std::string_view op = without_overload(name);
  for (const CudaDtypes& entry : kCudaOnlyDtypes) {
    if (entry.op == op) {
      return (dtype == at::kHalf && entry.half) || (dtype == at::kBFloat16 && entry.bfloat16) ||
          (dtype == at::kBool && entry.boolean);
    }
  }
  return false;
}

// The dtype the CPU computes `refused` in, where that gives CUDA's result
// (exactly, or within the half types' tolerance: CUDA computes them in float).
std::optional<at::ScalarType> compute_dtype(at::ScalarType refused) {
  switch (refused) {
    case at::kHalf:
    case at::kBFloat16:
      return at::kFloat;
    case at::kComplexHalf:
      return at::kComplexFloat;
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
      return at::kLong;
    default:
      return std::nullopt;
  }
}

c10::IValue to_meta(const c10::IValue& value) {
  const auto meta = [](const at::Tensor& t) {
    return t.defined() ? at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta)) : t;
  };
  if (value.isTensor()) {
    return meta(value.toTensor());
  }
  if (value.isTensorList()) {
    c10::List<at::Tensor> tensors;
    for (const at::Tensor& t : value.toTensorList()) {
      tensors.push_back(meta(t));
    }
    return tensors;
  }
  if (value.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> tensors;
    for (const std::optional<at::Tensor>& t : value.toOptionalTensorList()) {
      tensors.push_back(t.has_value() ? std::optional(meta(*t)) : std::nullopt);
    }
    return tensors;
  }
  if (value.isDevice()) {
    return c10::Device(at::kMeta);
  }
  return value;
}

// The results of `op` on meta tensors shaped as the arguments: their dtypes
// are the ones the call should return. Nothing where the op has no meta
// kernel or its meta kernel refuses the call.
std::optional<torch::jit::Stack> meta_results(const c10::OperatorHandle& op, const torch::jit::Stack& arguments) {
  torch::jit::Stack stack;
  stack.reserve(arguments.size());
  for (const c10::IValue& argument : arguments) {
    stack.push_back(to_meta(argument));
  }
  try {
    op.callBoxed(stack);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return stack;
}

// Without a meta kernel (many backward ops have none), a half type's results
// are still known: where no tensor of the call was float32 and no dtype was
// asked for, a float32 result can only come from the widened arguments, and
// in the call's own dtype would have been the refused one.
bool float32_results_are_widened(
    at::ScalarType refused,
    const c10::FunctionSchema& schema,
    const torch::jit::Stack& arguments) {
  if (refused != at::kHalf && refused != at::kBFloat16) {
    return false;
  }
  bool any_float32 = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    for_each_tensor(arguments[i], [&](const at::Tensor& t) {
      any_float32 = any_float32 || (t.defined() && t.scalar_type() == at::kFloat);
    });
    const c10::TypePtr& type = schema.arguments()[i].real_type();
    const bool dtype_argument = type->kind() == c10::TypeKind::ScalarTypeType ||
        (type->kind() == c10::TypeKind::OptionalType &&
         type->expectRef<c10::OptionalType>().getElementType()->kind() == c10::TypeKind::ScalarTypeType);
    if (dtype_argument && !arguments[i].isNone()) {
      return false;
    }
  }
  return !any_float32;
}

// Drops what a failed run left of its arguments (it may have popped some).
void drop_from(torch::jit::Stack& stack, size_t base) {
  if (stack.size() > base) {
    stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end());
  }
}

bool is_written(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

// A result computed in the wider dtype, as the call returns it: cast to
// `expected`, a bool only where every value is 0 or 1.
at::Tensor cast_back(const at::Tensor& result, at::ScalarType expected, bool& exact) {
  if (!result.defined() || result.scalar_type() == expected) {
    return result;
  }
  if (expected == at::kBool && result.numel() > 0) {
    exact = exact && result.eq(0).logical_or_(result.eq(1)).all().item<bool>();
  }
  return result.to(expected);
}

void write_back(const at::Tensor& original, const at::Tensor& computed) {
  if (original.sizes() != computed.sizes()) {
    original.resize_(computed.sizes());
  }
  original.copy_(computed);
}

void run_in_wider_dtype(
    const char* device,
    const std::string& name,
    const c10::OperatorHandle& op,
    at::ScalarType refused,
    const torch::jit::Stack& arguments,
    torch::jit::Stack* stack,
    c10::function_ref<void(torch::jit::Stack*)> run_on_host) {
  const std::optional<at::ScalarType> wider = compute_dtype(refused);
  if (!wider.has_value() || !cuda_computes(name, refused)) {
    refuse(device, name, refused);
  }
  const c10::FunctionSchema& schema = op.schema();
  // A view of an argument computed in another dtype would alias a copy.
  for (const c10::Argument& result : schema.returns()) {
    if (result.alias_info() != nullptr && !result.alias_info()->isWrite()) {
      refuse(device, name, refused);
    }
  }
  const std::optional<torch::jit::Stack> meta = meta_results(op, arguments);
  if (!meta.has_value() && !float32_results_are_widened(refused, schema, arguments)) {
    refuse(device, name, refused);
  }
  // The dtype the call returns where the computation gave `computed`.
  const auto expected_dtype = [&](size_t r, size_t k, at::ScalarType computed) {
    if (!meta.has_value()) {
      return computed == at::kFloat ? refused : computed;
    }
    const c10::IValue& m = (*meta)[r];
    if (m.isTensor()) {
      return m.toTensor().scalar_type();
    }
    if (m.isTensorList() && k < m.toTensorList().size()) {
      return m.toTensorList().get(k).scalar_type();
    }
    return computed;
  };

  const auto widen = [&](const at::Tensor& t) {
    return t.defined() && t.scalar_type() == refused ? t.to(*wider) : t;
  };
  // Written arguments that were widened: (original, the one the kernel writes).
  std::vector<std::pair<at::Tensor, at::Tensor>> written;
  const auto widen_written = [&](const at::Tensor& t) {
    at::Tensor w = widen(t);
    if (!w.is_same(t)) {
      written.emplace_back(t, w);
    }
    return w;
  };
  const auto& schema_arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& argument = arguments[i];
    const bool writes = is_written(schema_arguments[i]);
    if (argument.isTensor()) {
      stack->emplace_back(writes ? widen_written(argument.toTensor()) : widen(argument.toTensor()));
    } else if (argument.isTensorList()) {
      c10::List<at::Tensor> tensors;
      for (const at::Tensor& t : argument.toTensorList()) {
        tensors.push_back(writes ? widen_written(t) : widen(t));
      }
      stack->emplace_back(std::move(tensors));
    } else if (argument.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> tensors;
      for (const std::optional<at::Tensor>& t : argument.toOptionalTensorList()) {
        tensors.push_back(t.has_value() ? std::optional(widen(*t)) : std::nullopt);
      }
      stack->emplace_back(std::move(tensors));
    } else {
      stack->push_back(argument);
    }
  }
  const size_t base = stack->size() - arguments.size();
  try {
    run_on_host(stack);
  } catch (const c10::NotImplementedError&) {
    drop_from(*stack, base);
    refuse(device, name, refused);
  }
  for (const auto& [original, computed] : written) {
    write_back(original, computed);
  }

  const size_t num_returns = schema.returns().size();
  const size_t returns_begin = stack->size() - num_returns;
  bool exact = true;
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& result = (*stack)[returns_begin + r];
    const c10::AliasInfo* alias = schema.returns()[r].alias_info();
    if (alias != nullptr) {
      // An in-place or out= argument: the original, written back above.
      for (size_t i = 0; i < arguments.size(); ++i) {
        const c10::AliasInfo* argument_alias = schema_arguments[i].alias_info();
        if (argument_alias != nullptr && *argument_alias == *alias) {
          result = arguments[i];
          break;
        }
      }
    } else if (result.isTensor()) {
      const at::Tensor computed = result.toTensor();
      if (computed.defined()) {
        result = cast_back(computed, expected_dtype(r, 0, computed.scalar_type()), exact);
      }
    } else if (result.isTensorList()) {
      const c10::List<at::Tensor> computed = result.toTensorList();
      c10::List<at::Tensor> results;
      for (size_t k = 0; k < computed.size(); ++k) {
        const at::Tensor t = computed.get(k);
        results.push_back(t.defined() ? cast_back(t, expected_dtype(r, k, t.scalar_type()), exact) : t);
      }
      result = std::move(results);
    }
  }
  if (!exact) {
    drop_from(*stack, returns_begin);
    refuse(device, name, refused);
  }
}

} // namespace

void run_in_supported_dtype(
    const char* device,
    const std::string& name,
    const c10::OperatorHandle& op,
    torch::jit::Stack* stack,
    c10::function_ref<void(torch::jit::Stack*)> run_on_host) {
  const size_t num_arguments = op.schema().arguments().size();
  const size_t base = stack->size() - num_arguments;
  // The arguments as they came: the refused run leaves the stack as it was
  // when the kernel threw.
  torch::jit::Stack arguments(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  if (!arguments.empty() && arguments.front().isTensor() && arguments.front().toTensor().defined()) {
    const at::ScalarType dtype = arguments.front().toTensor().scalar_type();
    if (has_rule(name, dtype)) {
      drop_from(*stack, base);
      run_by_rule(name, dtype, arguments, stack);
      return;
    }
    if (computed_wider_up_front(name, dtype)) {
      drop_from(*stack, base);
      run_in_wider_dtype(device, name, op, dtype, arguments, stack, run_on_host);
      return;
    }
  }
  try {
    run_on_host(stack);
    return;
  } catch (const c10::NotImplementedError& refusal) {
    const std::optional<at::ScalarType> dtype = refused_dtype(refusal.what_without_backtrace(), arguments);
    if (!dtype.has_value()) {
      throw;
    }
    drop_from(*stack, base);
    if (run_by_rule(name, *dtype, arguments, stack)) {
      return;
    }
    run_in_wider_dtype(device, name, op, *dtype, arguments, stack, run_on_host);
  }
}

} // namespace scaffold::runtime
