// The zero-copy CPU fallback, for devices whose memory the host can address.
//
// The generated fallback (fallback.mode: host_view in the backend YAML) calls
// host_view_fallback() instead of ATen's copying cpu_fallback when
// host_view_fallback_enabled() says so. The op then runs ATen's CPU kernel on
// host views of the device tensors (memory_access.h), exactly as foo's
// hand-written kernels do:
//   * every device tensor argument (tensor lists and optional tensor lists
//     too) becomes a CPU tensor over the same memory: same sizes, strides,
//     storage offset, dtype and conj/neg bits; arguments sharing a device
//     storage share one host storage, so the CPU kernel sees their overlap;
//   * in-place and out= arguments are therefore written in place; an out=
//     argument the kernel must grow gets the result with one copy;
//   * memory the CPU kernel allocates on this thread while it runs comes from
//     the device allocator (through its host view), so new outputs are
//     already device memory and are handed back without a copy; an output
//     allocated elsewhere (another thread, an allocator someone else
//     installed) is copied to the device once;
//   * outputs that alias an input (views) come back as views of the device
//     tensor; outputs that are an in-place/out= argument come back as that
//     very device tensor.
// The current stream of every device involved is synchronised first, so the
// host sees all work queued before the op.
//
// A device whose memory is not host-addressable keeps the copying fallback:
// host_view_fallback_enabled() is false there.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace scaffold::runtime {

// True when the device memory is host-addressable and
// SCAFFOLD_HOST_VIEW_FALLBACK is not set to 0 (read once; the switch exists
// to run a backend's tests through the copying fallback too).
bool host_view_fallback_enabled();

// Runs `op` on the CPU over host views of its device arguments (see above).
// Same contract as at::native::cpu_fallback.
void host_view_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

} // namespace scaffold::runtime
