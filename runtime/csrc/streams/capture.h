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
//   random numbers      a random kernel launched on a captured stream draws
//                       from a generator the graph reseeds at every replay
//                       (CapturedRandom below); one that draws on the host
//                       while it is captured (the CPU fallback's) would
//                       repeat its numbers at every replay: refused.
//
// One relaxed load (capture_underway) is all a launch or allocation pays
// when no stream is captured.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include "launch.h"
#include "scaffold_driver.h"

namespace scaffold::runtime {

// True while some stream of this process is being captured
// (detail::g_captures_underway: launch.h).
inline bool capture_underway() noexcept {
  return C10_UNLIKELY(detail::g_captures_underway.load(std::memory_order_relaxed) > 0);
}

// Random numbers in a graph. Each generator the captured random kernels use
// has one ReplaySeed in the graph: at every replay the graph draws a new
// value from the generator, stream-ordered before the replayed work (as
// CUDA's graphs advance a generator's philox offset at each replay), and the
// kernels seed their draws from it. So every replay draws new numbers,
// torch.manual_seed makes a sequence of replays reproducible, and eager ops
// after a replay go on with the generator's stream.
struct ReplaySeed {
  explicit ReplaySeed(at::Generator generator) : source(std::move(generator)) {}
  const at::Generator source; // the device generator the kernels were given
  // Written by the replay's first launched work, read by the replay's
  // kernels: one stream orders both.
  uint64_t value = 0;
};

// What a random kernel launched on a captured stream keeps: the graph's seed
// for its generator and its place among the capture's random kernels (two
// dropouts in one replay draw different masks).
class CapturedRandom {
 public:
  CapturedRandom(std::shared_ptr<const ReplaySeed> seed, uint64_t ordinal)
      : seed_(std::move(seed)), ordinal_(ordinal) {}
  // A CPU generator (mt19937) for one run of the kernel, its whole state
  // derived from the replay's seed and the kernel's ordinal. Call it from
  // the launched work, never at the launch.
  at::Generator generator() const;

 private:
  std::shared_ptr<const ReplaySeed> seed_;
  uint64_t ordinal_;
};

// For a random kernel about to launch on captured `stream`: its generator's
// seed in the graph (created on the generator's first use in the capture).
// `device_generator` is a generator of this backend (generator.h).
CapturedRandom capture_random_kernel(drvStream_t stream, const at::Generator& device_generator);

// What ending a capture hands to its graph: the driver's graph, the
// closures its host functions run and the seeds its random kernels read.
struct CapturedWork {
  drvGraph_t graph = nullptr;
  std::vector<std::unique_ptr<LaunchedWork>> closures;
  std::vector<std::shared_ptr<ReplaySeed>> random_seeds;
};

// Starts capturing `stream` of `device` (drvStreamBeginCapture). Throws
// when the driver has no graphs or the stream is captured already.
void begin_stream_capture(c10::DeviceIndex device, drvStream_t stream);
// Ends the capture of `stream`: its graph and closures, or, when an error
// invalidated the capture, throws naming that error (the stream runs its
// work again either way).
CapturedWork end_stream_capture(drvStream_t stream);

// Events join streams into a capture (CUDA's fork and join, the driver's
// drvStreamWaitEvent): an event recorded on a captured stream keeps the
// capture's id; a stream that waits on it joins the capture, and what it
// launches is captured into the same graph until the capture ends.
//
// The id of the capture `stream` takes part in (0: none).
uint64_t capture_id_of(drvStream_t stream);
// `waiter` waited on an event recorded in capture `id`: it has joined it
// (nothing when that capture ended).
void joined_capture(uint64_t id, drvStream_t waiter);
// Throws when capture `id` is under way: `what` (waiting for or timing an
// event recorded in it, whose record runs only at a replay) cannot be
// captured. The capture is invalidated.
void refuse_if_capture_live(uint64_t id, const std::string& what);
// The stream the capture `stream` takes part in began on (what allocations
// are routed to a graph's pool by); `stream` itself when it is not captured.
drvStream_t capture_origin(drvStream_t stream);

// True when `stream` is being captured (begun on it or joined).
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
