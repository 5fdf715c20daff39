// KernelDeclined: a kernel saying "not this call" before it has written
// anything, so that its op runs through the copying fallback instead. The
// generated wrapper of every kernel that may decline (all but the core ops,
// views and autograd kernels) catches it (declined_kernel.h). Two kinds of
// kernel decline:
//   - kernels that compute on host views, on a device whose memory the host
//     cannot address (HostAccessUnavailable, host_access_error.h);
//   - device kernels that cover part of an op (the dtypes their device code
//     was written for): they call decline_kernel for the rest, which keeps
//     those calls correct on the CPU until device code covers them.
// Counted apart from ops without a kernel (torch.<device>.declined_kernel_counts()).
#pragma once

#include <string>

#include <c10/util/Exception.h>

namespace scaffold::runtime {

class KernelDeclined : public c10::Error {
 public:
  using c10::Error::Error;
};

// Throws KernelDeclined: the kernel of `op` does not run this call, for
// `reason` (said once, in the fallback's warning).
[[noreturn]] void decline_kernel(const std::string& op, const std::string& reason);

// Why the calling thread's kernel last declined (empty before any decline).
const std::string& last_decline_reason() noexcept;

namespace detail {
void set_decline_reason(std::string reason);
} // namespace detail

} // namespace scaffold::runtime
