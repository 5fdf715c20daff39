// HostAccessUnavailable: what host_view, host_address and the kernels' host
// views throw on a device whose memory the host cannot address
// (device_memory_is_host_addressable, allocator.h). The generated kernel
// wrappers catch it: a kernel that computes on host views declines on such a
// device, and its op runs through the copying fallback instead
// (declined_kernel.h). Anywhere else it reaches the user as a RuntimeError
// that says so.
#pragma once

#include "kernel_declined.h"

namespace scaffold::runtime {

class HostAccessUnavailable : public KernelDeclined {
 public:
  using KernelDeclined::KernelDeclined;
};

// Throws HostAccessUnavailable for `what` (the host access refused).
[[noreturn]] void refuse_host_access(const char* what);

} // namespace scaffold::runtime
