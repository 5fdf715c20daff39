#include "functional_operands.h"

#include <algorithm>
#include <utility>

#include <ATen/ops/copy_native.h>
#include <c10/util/Exception.h>

#include "core_ops.h"
#include "host_view_cache.h"
#include "memory_access.h"
#include "stream.h"

namespace scaffold::runtime {

FunctionalOperands::FunctionalOperands(TensorRefs inputs) {
  TORCH_INTERNAL_ASSERT(inputs.size() <= kMaxInputs);
  std::optional<c10::Device> device;
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) {
      return;
    }
    if (is_cpu_scalar(t)) {
      continue;
    }
    if (!on_backend(t) || t.layout() != c10::kStrided) {
      return;
    }
    if (!device.has_value()) {
      device = t.device();
    } else if (*device != t.device()) {
      return;
    }
  }
  if (!device.has_value()) {
    return;
  }
  ThreadViewCache& cache = thread_view_cache();
  size_t i = 0;
  for (const at::Tensor& t : inputs) {
    add_input(i++, t, cache);
  }
  device_ = device;
}

FunctionalOperands::FunctionalOperands(const at::Tensor& output, TensorRefs inputs) {
  TORCH_INTERNAL_ASSERT(inputs.size() <= kMaxInputs);
  if (!output.defined() || !on_backend(output) || output.layout() != c10::kStrided) {
    return;
  }
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) {
      return;
    }
    if (!is_cpu_scalar(t) && (t.device() != output.device() || t.layout() != c10::kStrided)) {
      return;
    }
  }
  existing_output_ = true;
  ThreadViewCache& cache = thread_view_cache();
  if (caller_held() == StorageRef::Borrowed) {
    bool sticky = false;
    host_out_ = sticky_host_view(output, cache, &sticky);
    sticky_ |= sticky ? kOutputBit : 0u;
  } else {
    host_out_ = recycled_host_view(output, cache, StorageRef::Owning);
  }
  size_t i = 0;
  for (const at::Tensor& t : inputs) {
    if (!is_cpu_scalar(t) && t.storage().is_alias_of(output.storage())) {
      // In the output's memory: a view on the output's host storage, so
      // that the CPU kernel sees the overlap (and refuses partial overlap)
      // exactly as it would on the CPU.
      inputs_[i++] = host_view_sharing_storage(host_out_, t);
    } else {
      add_input(i++, t, cache);
    }
  }
  device_ = output.device();
}

void FunctionalOperands::add_input(size_t i, const at::Tensor& t, ThreadViewCache& cache) {
  if (is_cpu_scalar(t)) {
    inputs_[i] = t;
  } else if (caller_held() == StorageRef::Borrowed) {
    bool sticky = false;
    inputs_[i] = sticky_host_view(t, cache, &sticky);
    recycled_ |= 1u << i;
    sticky_ |= sticky ? 1u << i : 0u;
  } else {
    inputs_[i] = recycled_host_view(t, cache, StorageRef::Owning);
    recycled_ |= 1u << i;
  }
}

FunctionalOperands::~FunctionalOperands() {
  if (!host_out_.defined() &&
      std::none_of(inputs_.begin(), inputs_.end(), [](const at::Tensor& t) { return t.defined(); })) {
    return; // moved from (into launched work), or not native()
  }
  ThreadViewCache& cache = thread_view_cache();
  for (size_t i = 0; i < kMaxInputs; ++i) {
    if (sticky_ & (1u << i)) {
      end_sticky_use(inputs_[i], cache);
    } else if (recycled_ & (1u << i)) {
      recycle_host_view(inputs_[i], cache);
    } else {
      inputs_[i].reset(); // may share the output's host storage: let go of it first
    }
  }
  if (sticky_ & kOutputBit) {
    end_sticky_use(host_out_, cache);
  } else {
    recycle_host_view(host_out_, cache);
  }
}

void FunctionalOperands::wait(bool runs_inline) const {
  TORCH_INTERNAL_ASSERT(native(), "wait: not native()");
  wait_for_current_stream(device_->index());
  if (runs_inline) {
    inline_timing_.begin(nullptr, device_->index()); // named after its op in a profile
  }
}

bool FunctionalOperands::meta_converts_inputs(
    bool output_is_input, bool integral_kept, std::optional<at::ScalarType> scalar_operand) const {
  const auto category = [](at::ScalarType t) {
    return c10::isComplexType(t) ? 3 : c10::isFloatingType(t) ? 2 : t == at::kBool ? 0 : 1;
  };
  std::optional<at::ScalarType> device_dtype;
  int scalar_category = scalar_operand.has_value() ? category(*scalar_operand) : -1;
  // Returns true once two device operands differ in dtype.
  const auto device_operand = [&](const at::Tensor& t) {
    if (!device_dtype.has_value()) {
      device_dtype = t.scalar_type();
      return false;
    }
    return *device_dtype != t.scalar_type();
  };
  if (output_is_input) {
    TORCH_INTERNAL_ASSERT(existing_output_, "meta_converts_inputs: an in-place op without its self");
    device_operand(host_out_);
  }
  for (size_t i = 0; i < kMaxInputs; ++i) {
    const at::Tensor& t = inputs_[i];
    if (!t.defined()) {
      continue;
    }
    // Host views are recycled, or share the output's host storage; anything
    // else is a CPU scalar the kernel was given.
    const bool on_device = (recycled_ & (1u << i)) != 0 ||
        (existing_output_ && t.storage().is_alias_of(host_out_.storage()));
    if (!on_device) {
      scalar_category = std::max(scalar_category, category(t.scalar_type()));
    } else if (device_operand(t)) {
      return true;
    }
  }
  // An out= tensor of another dtype (a comparison's bool out=) is not
  // converted by meta(): TensorIterator's common dtype is the inputs', and
  // the result is cast into such an output when impl() runs. self of an
  // in-place op is an input (counted above): complex self.mul_(float other)
  // converts other on the caller.
  // An integral or boolean operand: ops that compute in floating point (true
  // division, sqrt, exp, ...) promote it to float in meta(); which ops do is
  // not known here, so every such call waits (x / (1 + x.abs()) on int64 read
  // the denominator before its launched add had run) -- but for ops that
  // say they keep integral inputs.
  return device_dtype.has_value() &&
      (scalar_category > category(*device_dtype) || (!integral_kept && category(*device_dtype) < 2));
}

at::Tensor& FunctionalOperands::make_output(
    at::IntArrayRef sizes,
    at::IntArrayRef strides,
    const at::TensorOptions& options) {
  TORCH_INTERNAL_ASSERT(
      native() && !existing_output_ && !result_.defined(), "make_output: not native(), or called twice");
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  result_ = strides.empty()
      ? empty(sizes, dtype, c10::kStrided, *device_, std::nullopt, options.memory_format_opt())
      : empty_strided(sizes, strides, dtype, c10::kStrided, *device_, std::nullopt);
  host_out_ = recycled_host_view(result_, thread_view_cache(), StorageRef::Owning);
  return host_out_;
}

at::Tensor FunctionalOperands::adopt(const at::Tensor& host_result) const {
  TORCH_INTERNAL_ASSERT(native(), "adopt: not native()");
  at::Tensor result = empty_strided(
      host_result.sizes(),
      host_result.strides(),
      host_result.scalar_type(),
      c10::kStrided,
      *device_,
      std::nullopt);
  at::Tensor dst = host_view(result);
  at::native::copy_(dst, host_result, /*non_blocking=*/false);
  return result;
}

c10::Device result_device(TensorRefs operands) {
  for (const at::Tensor& t : operands) {
    if (t.defined() && !t.device().is_cpu()) {
      return t.device();
    }
  }
  return c10::Device(c10::DeviceType::CPU);
}

at::Tensor allocate(at::IntArrayRef size, at::ScalarType dtype, c10::Device device) {
  return empty(size, dtype, c10::kStrided, device, std::nullopt, std::nullopt);
}

} // namespace scaffold::runtime
