#include "cpu_fallback.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>

#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include "declined_kernel.h"
#include "dtype_fallback.h"
#include "fallback_observer.h"
#include "host_traffic.h"

namespace scaffold::runtime {
namespace {

class FallbackCounter {
 public:
  // Counts one fallback of `op`; true the first time `op` falls back.
  bool record(const std::string& op) {
    std::lock_guard<std::mutex> lock(mutex_);
    return ++counts_[op] == 1;
  }

  std::tuple<std::vector<std::string>, std::vector<int64_t>> snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    std::vector<int64_t> counts;
    names.reserve(counts_.size());
    counts.reserve(counts_.size());
    for (const auto& [name, count] : counts_) {
      names.push_back(name);
      counts.push_back(count);
    }
    return {names, counts};
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> counts_;
};

FallbackCounter& fallback_counter() {
  static FallbackCounter counter;
  return counter;
}

FallbackCounter& declined_kernel_counter() {
  static FallbackCounter counter;
  return counter;
}

// Per op: calls, bytes moved between host and device, bytes of its device
// tensors (arguments and results).
class TrafficCounter {
 public:
  struct Totals {
    int64_t calls = 0;
    int64_t moved = 0;
    int64_t tensors = 0;
  };

  void record(const std::string& op, int64_t moved, int64_t tensors) {
    std::lock_guard<std::mutex> lock(mutex_);
    Totals& totals = totals_[op];
    ++totals.calls;
    totals.moved += moved;
    totals.tensors += tensors;
  }

  std::tuple<std::vector<std::string>, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>
  snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    std::vector<int64_t> calls, moved, tensors;
    for (const auto& [name, totals] : totals_) {
      names.push_back(name);
      calls.push_back(totals.calls);
      moved.push_back(totals.moved);
      tensors.push_back(totals.tensors);
    }
    return {names, calls, moved, tensors};
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    totals_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Totals> totals_;
};

TrafficCounter& traffic_counter() {
  static TrafficCounter counter;
  return counter;
}

// Bytes of the device tensors among `values` (a tensor, or tensors in a list).
int64_t device_tensor_bytes(c10::ArrayRef<c10::IValue> values) {
  int64_t bytes = 0;
  const auto add = [&bytes](const at::Tensor& t) {
    if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
      bytes += static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.itemsize());
    }
  };
  for (const c10::IValue& value : values) {
    if (value.isTensor()) {
      add(value.toTensor());
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList()) {
        add(t);
      }
    } else if (value.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : value.toOptionalTensorList()) {
        if (t.has_value()) {
          add(*t);
        }
      }
    }
  }
  return bytes;
}

// Measures one fallback run's traffic and the bytes of its device tensors:
// each argument once, once more each argument the op writes (in-place, out=),
// and each new result.
class TrafficOfRun {
 public:
  TrafficOfRun(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack)
      : name_(name), op_(op), before_(host_traffic_of_this_thread()) {
    const auto& arguments = op.schema().arguments();
    const size_t begin = stack.size() - arguments.size();
    for (size_t i = 0; i < arguments.size(); ++i) {
      const int64_t bytes = device_tensor_bytes(c10::ArrayRef<c10::IValue>(stack[begin + i]));
      const c10::AliasInfo* alias = arguments[i].alias_info();
      argument_bytes_ += alias != nullptr && alias->isWrite() ? 2 * bytes : bytes;
    }
  }
  // After a successful run, with the results on `stack`.
  void record(const torch::jit::Stack& stack) const {
    const auto& returns = op_.schema().returns();
    const size_t begin = stack.size() - returns.size();
    int64_t result_bytes = 0;
    for (size_t i = 0; i < returns.size(); ++i) {
      if (returns[i].alias_info() == nullptr) { // an alias of a written argument is counted with it
        result_bytes += device_tensor_bytes(c10::ArrayRef<c10::IValue>(stack[begin + i]));
      }
    }
    const HostTraffic after = host_traffic_of_this_thread();
    const auto moved = static_cast<int64_t>((after.to_host - before_.to_host) + (after.to_device - before_.to_device));
    traffic_counter().record(name_, moved, argument_bytes_ + result_bytes);
  }

 private:
  const std::string& name_;
  const c10::OperatorHandle& op_;
  HostTraffic before_;
  int64_t argument_bytes_ = 0;
};

// "aten::add.out". c10::toString goes through an ostringstream, which costs
// as much as a small op's CPU kernel; this runs on every fallback.
std::string qualified_name(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

const char* how_it_runs(const FallbackPolicy& policy) {
  return policy.host_view_fallback != nullptr
      ? "on host views of device memory where the runtime allows it, else copying"
      : "tensors are copied both ways";
}

// ---- Devices of the arguments ------------------------------------------------
//
// The CPU kernel cannot tell a host tensor from a host view of device memory,
// and ATen's copying fallback puts its outputs on the first tensor's device:
// without a check, conv2d(cpu_input, device_weight) or batch_norm with CPU
// running stats would run and write wherever the mode put it. Kernels of
// CUDA raise there; so does this, before anything runs, with ATen's own
// message. Allowed, as for CUDA: CPU 0-dim tensors that are only read
// (wrapped scalars, which TensorIterator ops take on any device) and CPU
// tensors in a Tensor?[] argument (advanced indexing: x[cpu_index]).

struct CommonDevice {
  const std::string& op;
  std::optional<c10::Device> device;

  void check(const at::Tensor& t, const c10::Argument& argument, bool cpu_allowed) {
    if (!t.defined()) {
      return;
    }
    if (t.device().is_cpu()) {
      const c10::AliasInfo* alias = argument.alias_info();
      const bool written = alias != nullptr && alias->isWrite();
      if (cpu_allowed || (t.dim() == 0 && !written)) {
        return;
      }
    }
    c10::impl::check_and_update_common_device(device, t, op.c_str(), argument.name().c_str());
  }
};

void check_same_device(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  const size_t begin = stack.size() - arguments.size();
  CommonDevice common{name, std::nullopt};
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = stack[begin + i];
    if (value.isTensor()) {
      common.check(value.toTensor(), arguments[i], /*cpu_allowed=*/false);
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList()) {
        common.check(t, arguments[i], /*cpu_allowed=*/false);
      }
    } else if (value.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : value.toOptionalTensorList()) {
        if (t.has_value()) {
          common.check(*t, arguments[i], /*cpu_allowed=*/true);
        }
      }
    }
  }
}

// Where ATen's copying fallback leaves results on the CPU that belong on the
// device: it puts them on the device of the first tensor argument, which may
// be a CPU 0-dim one (a wrapped scalar: div(cpu_scalar, x) and the backward of
// add and mul); the device of the first device tensor then, as in the
// host-view fallback. nullopt when ATen's choice stands (the first tensor is
// on the device, or the op names a device).
std::optional<c10::Device> device_of_results(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  const size_t begin = stack.size() - arguments.size();
  bool first_tensor_on_cpu = false;
  bool seen_tensor = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = stack[begin + i];
    if (value.isDevice()) {
      return std::nullopt;
    }
    if (value.isTensor() && value.toTensor().defined()) {
      const at::Tensor& t = value.toTensor();
      if (!seen_tensor) {
        seen_tensor = true;
        first_tensor_on_cpu = t.device().is_cpu();
      }
      if (first_tensor_on_cpu && t.device().type() == c10::DeviceType::PrivateUse1) {
        return t.device();
      }
    }
  }
  return std::nullopt;
}

void move_results_to(c10::Device device, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t returns = op.schema().returns().size();
  for (size_t i = stack->size() - returns; i < stack->size(); ++i) {
    c10::IValue& value = (*stack)[i];
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().device().is_cpu()) {
      value = value.toTensor().to(device);
    }
  }
}

// Arguments an op writes although its schema does not say so, which ATen's
// copying fallback would leave unchanged on the device: native_batch_norm's
// running statistics (updated in training).
struct UnannotatedWrites {
  std::string_view op;
  std::array<size_t, 2> arguments;
};
constexpr std::array<UnannotatedWrites, 1> kUnannotatedWrites{{{"aten::native_batch_norm", {3, 4}}}};

// ATen's copying fallback, with the unannotated writes copied back.
void run_copying(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.operator_name();
  const size_t begin = stack->size() - op.schema().arguments().size();
  c10::SmallVector<std::pair<at::Tensor, at::Tensor>, 2> written; // device tensor, its CPU copy
  for (const UnannotatedWrites& writes : kUnannotatedWrites) {
    if (name.overload_name.empty() && name.name == writes.op) {
      for (const size_t index : writes.arguments) {
        c10::IValue& argument = (*stack)[begin + index];
        if (argument.isTensor() && argument.toTensor().defined() &&
            argument.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
          at::Tensor device = argument.toTensor();
          at::Tensor copy = device.cpu();
          argument = copy;
          written.emplace_back(std::move(device), std::move(copy));
        }
      }
    }
  }
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
  for (auto& [device, copy] : written) {
    device.copy_(copy);
  }
}

void run_on_host(const FallbackPolicy& policy, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  // Copies only where the runtime says the host cannot address device memory
  // (or SCAFFOLD_HOST_VIEW_FALLBACK=0 asks for them).
  if (policy.host_view_fallback != nullptr && policy.host_view_enabled()) {
    policy.host_view_fallback(op, stack);
    return;
  }
  // error_on_views: an op returning a view of its input cannot be run on a host copy (the
  // result would alias the copy, and writes through it would be lost); PyTorch only warns.
  // The backend must implement such views (core_ops.py lists the dense ones).
  const std::optional<c10::Device> results_device = device_of_results(op, *stack);
  run_copying(op, stack);
  if (results_device.has_value()) {
    move_results_to(*results_device, op, stack);
  }
}

// Why an op runs on the CPU: it has no kernel, or its kernel declined
// (declined_kernel.h).
enum class FallbackReason { NoKernel, KernelDeclined };

void run_named_on_cpu(
    const FallbackPolicy& policy,
    const std::string& name,
    const c10::OperatorHandle& op,
    torch::jit::Stack* stack,
    FallbackReason reason = FallbackReason::NoKernel) {
  check_same_device(name, op, *stack);
  // The CPU computes now, on the host: a replay of a stream capture would not run it.
  check_fallback_allowed(name);
  const bool first_of_op = fallback_counter().record(name);
  if (reason == FallbackReason::KernelDeclined) {
    declined_kernel_counter().record(name);
    // One warning, not one per op: on a device whose memory the host cannot
    // address every kernel written on host views declines, and the counts
    // name them all.
    static std::once_flag warned;
    std::call_once(warned, [&] {
      if (policy.warn_once_per_op) {
        TORCH_WARN(
            "Kernels of the '", policy.device, "' device decline some calls (the first: ", last_decline_reason(),
            "): those calls run on the CPU instead, tensors copied both ways. torch.", policy.device,
            ".declined_kernel_counts() counts them. Policy: ", policy.policy_source, ".");
      }
    });
  } else if (first_of_op && policy.warn_once_per_op) {
    TORCH_WARN(
        "'", name, "' has no kernel for the '", policy.device,
        "' backend and runs on the CPU instead (", how_it_runs(policy), "). "
        "Policy: ", policy.policy_source, ".");
  }
  // In a coverage report, this call (python -m <package>.coverage).
  const ObservedFallbackCall observed(name, op, *stack);
  // In a profile, the op's CPU run is a range of its own under the op.
  RECORD_FUNCTION_WITH_SCOPE(
      at::RecordScope::USER_SCOPE,
      "cpu_fallback: " + name,
      c10::ArrayRef<const c10::IValue>(stack->data() + stack->size() - op.schema().arguments().size(),
                                       op.schema().arguments().size()));
  const TrafficOfRun traffic(name, op, *stack);
  if (reason == FallbackReason::KernelDeclined) {
    // What the kernel would have run on host views, with the CPU's own dtype
    // support, as where the host addresses device memory.
    run_on_host(policy, op, stack);
  } else {
    // A dtype the CPU kernel refuses and CUDA's accept is computed in one the
    // CPU supports, or refused in the device's name (dtype_fallback.h).
    run_in_supported_dtype(policy.device, name, op, stack, [&](torch::jit::Stack* s) { run_on_host(policy, op, s); });
  }
  traffic.record(*stack);
}

std::atomic<const FallbackPolicy*> g_installed_policy{nullptr};

} // namespace

void install_fallback_policy(const FallbackPolicy& policy) noexcept {
  g_installed_policy.store(&policy, std::memory_order_release);
}

void run_declined_kernel_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const FallbackPolicy* policy = g_installed_policy.load(std::memory_order_acquire);
  TORCH_INTERNAL_ASSERT(policy != nullptr, "a kernel declined before the backend's fallback policy was installed");
  const std::string name = qualified_name(op);
  TORCH_CHECK_NOT_IMPLEMENTED(
      !std::binary_search(policy->never.begin(), policy->never.end(), std::string_view(name)),
      "'", name, "': the '", policy->device, "' kernel declined this call (", last_decline_reason(), "), and ",
      policy->policy_source, " lists the op under fallback.never, so it may not run on the CPU either. Write a "
      "kernel that launches device code for it.");
  run_named_on_cpu(*policy, name, op, stack, FallbackReason::KernelDeclined);
}

void run_on_cpu(const FallbackPolicy& policy, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_named_on_cpu(policy, qualified_name(op), op, stack);
}

void boxed_cpu_fallback(const FallbackPolicy& policy, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = qualified_name(op);
  TORCH_CHECK_NOT_IMPLEMENTED(
      !std::binary_search(policy.never.begin(), policy.never.end(), std::string_view(name)),
      "'", name, "' is not implemented for the '", policy.device, "' backend, and ",
      policy.policy_source, " lists it under fallback.never, so it may not fall back to the CPU.");
  TORCH_CHECK_NOT_IMPLEMENTED(
      policy.fall_back_to_cpu_by_default,
      "'", name, "' is not implemented for the '", policy.device, "' backend (",
      policy.policy_source, " sets fallback.default to 'error').");
  run_named_on_cpu(policy, name, op, stack);
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> fallback_counts() {
  return fallback_counter().snapshot();
}

void reset_fallback_counts() {
  fallback_counter().reset();
  declined_kernel_counter().reset();
  traffic_counter().reset();
}

std::tuple<std::vector<std::string>, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>
fallback_traffic() {
  return traffic_counter().snapshot();
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> declined_kernel_counts() {
  return declined_kernel_counter().snapshot();
}

} // namespace scaffold::runtime
