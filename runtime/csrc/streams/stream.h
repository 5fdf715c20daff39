// Streams and events: c10::Stream / c10::Event on top of the driver's
// streams and events (driver/scaffold_driver.h), which run their work
// asynchronously and in order. Copies and compute kernels (launch.h) are
// enqueued on the current stream; host code that touches device memory
// (inline kernels, the CPU fallback, .item()) first waits for it
// (wait_for_current_stream). torch.Stream, torch.Event, stream context
// managers and non_blocking copies behave as on CUDA. Every synchronisation
// here also reports an error raised by launched work (launch.h).
//
// Stream ids per device: 0 is the default stream; 1..kStreamPoolSize the
// normal-priority pool, the next kStreamPoolSize ids the high-priority pool,
// and ids above that are handed out by new_stream().
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "scaffold_driver.h"

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

// The driver stream behind `stream` (created on first use).
drvStream_t driver_stream(const c10::Stream& stream);
// The driver stream of the calling thread's current stream on `device`, a
// device of a tensor or allocation (not checked against the device count:
// every launch and allocation asks).
drvStream_t current_driver_stream(c10::DeviceIndex device);
int stream_priority(const c10::Stream& stream);
// The id of the stream of `device` whose driver stream is `driver`, or -1
// when none this runtime handed out is (profiles and memory snapshots name
// a driver's records by it). Takes a lock: not for hot paths.
c10::StreamId stream_id_of(c10::DeviceIndex device, drvStream_t driver);

// Blocks until the calling thread's current stream on `device` has no
// pending work: run before host code (a kernel running on the host, the
// CPU fallback) reads or writes that device's memory. Cheap when idle.
void wait_for_current_stream(c10::DeviceIndex device);

// Testing only: a paused stream queues work but runs none (see
// drvTestingPauseStream).
void pause_stream_for_testing(const c10::Stream& stream, bool paused);

bool query_stream(const c10::Stream& stream);
void synchronize_stream(const c10::Stream& stream);
void synchronize_device(c10::DeviceIndex device);

// Events are opaque handles created on first record (the
// DeviceGuardImplInterface protocol), each owning a driver event. A record
// also stamps a process-wide, monotonically increasing sequence number.
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
