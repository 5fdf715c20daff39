// Stream capture, as the core sees it: device graphs (csrc/graphs/) capture
// a stream's work with the driver (drvStreamBeginCapture) and replay it;
// this part of the core keeps what launches, host synchronisations, the
// allocator and the generator must know while a stream is captured.
//
//   launch()            work launched on a captured stream is recorded by the
//                       driver and runs at each replay, so its closure must
//                       outlive the launch: the capture keeps it, and hands
//                       it to the graph, which destroys it with itself;
//   synchronisations    waiting on a captured stream (.item(), .cpu(), a
//                       kernel run inline, synchronize()) would wait for work
//                       that only runs at a replay: it raises, naming the op,
//                       and invalidates the capture (as CUDA's
//                       cudaErrorStreamCaptureUnsupported does); the stream
//                       stays usable and ending the capture reports it;
//   random numbers      drawn on the host when an op is launched, they would
//                       be the same at every replay: refused
//                       (refuse_during_capture).
//
// One relaxed load (capture_underway) is all a launch or allocation pays
// when no stream is captured.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "launch.h"
#include "scaffold_driver.h"

namespace scaffold::runtime {

// True while some stream of this process is being captured
// (detail::g_captures_underway: launch.h).
inline bool capture_underway() noexcept {
  return C10_UNLIKELY(detail::g_captures_underway.load(std::memory_order_relaxed) > 0);
}

// What ending a capture hands to its graph: the driver's graph and the
// closures its host functions run.
struct CapturedWork {
  drvGraph_t graph = nullptr;
  std::vector<std::unique_ptr<LaunchedWork>> closures;
};

// Starts capturing `stream` of `device` (drvStreamBeginCapture). Throws
// when the driver has no graphs or the stream is captured already.
void begin_stream_capture(c10::DeviceIndex device, drvStream_t stream);
// Ends the capture of `stream`: its graph and closures, or, when an error
// invalidated the capture, throws naming that error (the stream runs its
// work again either way).
CapturedWork end_stream_capture(drvStream_t stream);

// True when `stream` is being captured.
bool is_capturing(drvStream_t stream);
// True when the calling thread's current stream on `device` is captured.
bool current_stream_capturing(c10::DeviceIndex device);

// Launch (launch.cpp): when `stream` is captured, records fn(work) with the
// driver (fn must not delete it: it runs at every replay), keeps `work` for
// the graph and returns true; false otherwise, `work` untouched.
bool launch_captured(drvStream_t stream, void (*fn)(void*), std::unique_ptr<LaunchedWork>& work);

// Throws when the calling thread's current stream on `device` (-1: on any
// device) is captured: `what` (e.g. "synchronises with the host") cannot be
// captured. The message names the op running (aten::item, ...); the capture
// is invalidated.
void refuse_during_capture(c10::DeviceIndex device, const std::string& what);
// The same for a synchronisation with `stream` itself.
void refuse_if_captured(drvStream_t stream, const std::string& what);
// Throws when any stream of `device` is captured (device-wide
// synchronisation, releasing cached memory).
void refuse_if_device_captured(c10::DeviceIndex device, const std::string& what);

} // namespace scaffold::runtime
