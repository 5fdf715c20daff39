// Kernels that decline (kernel_declined.h). A kernel that computes on host
// views (KernelCall, the structured helpers, HostKernelLaunch: ATen's CPU
// kernels on device memory the host addresses in place) cannot run on a
// device whose memory the host cannot address: its first host view throws
// HostAccessUnavailable, before it has written anything. A device kernel that
// covers part of an op (some dtypes) calls decline_kernel for the rest. The
// generated wrapper of every kernel catches KernelDeclined and runs the op
// through the copying fallback instead, under the backend's fallback policy
// (counted, warned about once, refused for ops on fallback.never), so the
// kernels written for the simulated device keep their ops working on a port
// whose driver is honest about its memory, until device kernels replace them.
//
//   try {
//     return foo::add(self, other, alpha);
//   } catch (const scaffold::runtime::KernelDeclined&) {
//     return at::native::call_fallback_fn_symint<
//         &scaffold::runtime::run_declined_kernel_on_cpu, at::_ops::add_Tensor>::call(self, other, alpha);
//   }
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/CPUFallback.h>

#include <utility>

#include "host_access_error.h"
#include "kernel_declined.h"

namespace scaffold::runtime {

// The boxed body behind the wrappers' catch: `op` on the CPU, copying, under
// the installed policy (cpu_fallback.h, install_fallback_policy).
void run_declined_kernel_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The same for a custom op of the backend (no at::_ops struct names it):
//   DeclinedCustomOp<at::Tensor(const at::Tensor&, double)>::call("foo::scale", "", a, c)
template <class Signature>
struct DeclinedCustomOp;

template <class Return, class... Args>
struct DeclinedCustomOp<Return(Args...)> {
  static Return call(const char* name, const char* overload, Args... args) {
    static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
    return c10::impl::BoxedKernelWrapper<Return(Args...)>::call(
        c10::BoxedKernel::makeFromFunction<&run_declined_kernel_on_cpu>(), op, c10::DispatchKeySet(),
        std::forward<Args>(args)...);
  }
};

} // namespace scaffold::runtime
