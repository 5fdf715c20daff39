// Kernels that decline. A kernel that computes on host views (KernelCall,
// the structured helpers, HostKernelLaunch: ATen's CPU kernels on device
// memory the host addresses in place) cannot run on a device whose memory the
// host cannot address: its first host view throws HostAccessUnavailable,
// before it has written anything. The generated wrapper of every kernel
// catches that and runs the op through the copying fallback instead, under
// the backend's fallback policy (counted, warned about once, refused for ops
// on fallback.never), so the kernels written for the simulated device keep
// their ops working on a port whose driver is honest about its memory, until
// device kernels replace them.
//
//   try {
//     return foo::add(self, other, alpha);
//   } catch (const scaffold::runtime::HostAccessUnavailable&) {
//     return at::native::call_fallback_fn_symint<
//         &scaffold::runtime::run_declined_kernel_on_cpu, at::_ops::add_Tensor>::call(self, other, alpha);
//   }
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/native/CPUFallback.h>

#include "host_access_error.h"

namespace scaffold::runtime {

// The boxed body behind the wrappers' catch: `op` on the CPU, copying, under
// the installed policy (cpu_fallback.h, install_fallback_policy).
void run_declined_kernel_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack);

} // namespace scaffold::runtime
