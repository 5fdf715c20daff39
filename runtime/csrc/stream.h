// Streams and events for a device whose work runs synchronously.
//
// Kernels execute on the calling thread before the op returns, so every
// stream is always idle and every recorded event has already happened. We
// still keep the bookkeeping PyTorch code observes -- stream identities,
// the current stream per thread and device, event ordering and timing -- so
// code written for CUDA-like devices (torch.Stream, torch.Event, stream
// context managers, non_blocking copies) runs unchanged.
//
// Stream ids per device: 0 is the default stream; 1..kStreamPoolSize the
// normal-priority pool, the next kStreamPoolSize ids the high-priority pool,
// and ids above that are handed out by new_stream().
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace scaffold::runtime {

constexpr c10::StreamId kStreamPoolSize = 32;

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);
c10::Stream new_stream(c10::DeviceIndex device, int priority);

// The calling thread's current stream on `device` (default stream until
// exchanged).
c10::Stream current_stream(c10::DeviceIndex device);

// Makes `stream` current for its device on this thread; returns the
// previous one.
c10::Stream exchange_stream(const c10::Stream& stream);

// Throws unless `stream` is a stream of this backend that was handed out.
void check_stream(const c10::Stream& stream);

bool query_stream(const c10::Stream& stream); // always idle
void synchronize_stream(const c10::Stream& stream);
void synchronize_device(c10::DeviceIndex device);

// Events are opaque handles created on first record (the
// DeviceGuardImplInterface protocol). A record stamps a process-wide,
// monotonically increasing sequence number and the host time.
void record_event(
    void** event,
    const c10::Stream& stream,
    c10::DeviceIndex device,
    c10::EventFlag flag);
void block_on_event(void* event, const c10::Stream& stream);
bool query_event(void* event);
void synchronize_event(void* event);
void destroy_event(void* event) noexcept;
// Milliseconds from `start` to `end`; both must be recorded and created with
// timing enabled (EventFlag::BACKEND_DEFAULT, torch.Event(enable_timing=True)).
double event_elapsed_ms(void* start, void* end, c10::DeviceIndex device);
// 0 for an event never recorded.
uint64_t event_sequence_number(void* event);

} // namespace scaffold::runtime
