// The backend-wide CPU fallback: where every op without a kernel of the
// backend's own goes, and the typed per-op wrappers of fallback.explicit.
//
// The generated <DispatchKey>Fallback.cpp holds only what the backend YAML
// decides -- a FallbackPolicy (default, mode, warn_once, the never list) --
// and the registrations; the machinery is here, written once: the policy
// checks, the warn-once message, the per-op counters users read with
// torch.ops.<device>._fallback_counts(), and the choice between ATen's
// copying cpu_fallback and the zero-copy host_view_fallback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/ArrayRef.h>

namespace scaffold::runtime {

// The YAML's fallback section, as the generated fallback file spells it out.
struct FallbackPolicy {
  // The device name and the YAML path, for messages.
  const char* device;
  const char* policy_source;
  // fallback.default: cpu (true) or error (false).
  bool fall_back_to_cpu_by_default;
  // fallback.warn_once: warn the first time each op falls back.
  bool warn_once_per_op;
  // fallback.mode: host_view hands in the runtime's zero-copy fallback and its
  // switch (host_view_fallback.h), used whenever the switch says so; mode: copy
  // leaves both null, and ATen's copying cpu_fallback runs every time. (Passed
  // in, not called directly, so that a copying backend links without them.)
  bool (*host_view_enabled)();
  void (*host_view_fallback)(const c10::OperatorHandle& op, torch::jit::Stack* stack);
  // fallback.never: qualified names ("aten::_cslt_sparse_mm"), sorted.
  c10::ArrayRef<std::string_view> never;
};

// Runs `op` on the CPU under `policy` (counted, warned about once per op if
// the policy says so). The body of the boxed fallback and of every
// fallback.explicit wrapper. Same contract as at::native::cpu_fallback.
void run_on_cpu(const FallbackPolicy& policy, const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The boxed fallback: refuses ops in policy.never, and every op when the
// default is "error"; otherwise run_on_cpu.
void boxed_cpu_fallback(const FallbackPolicy& policy, const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Makes `policy` (which must outlive the process's use of it: the generated
// fallback file's constant) the one run_declined_kernel_on_cpu applies.
void install_fallback_policy(const FallbackPolicy& policy) noexcept;

// How often each op ran on the CPU, by qualified name, sorted; and a reset.
// The counts tell a backend author which kernels to write next.
std::tuple<std::vector<std::string>, std::vector<int64_t>> fallback_counts();
void reset_fallback_counts();
// Of those, the runs of ops whose kernel declined (declined_kernel.h).
std::tuple<std::vector<std::string>, std::vector<int64_t>> declined_kernel_counts();
// What the fallback's runs of each op moved between host and device memory
// (bytes, both ways), against what the op's device tensors hold (its tensor
// arguments and results, bytes): names, calls, bytes moved, bytes the
// tensors hold. Reset with the counts.
std::tuple<std::vector<std::string>, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>
fallback_traffic();

} // namespace scaffold::runtime
