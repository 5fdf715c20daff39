// Op coverage: which aten ops reached the device, by which path, how often,
// for how long and on which inputs. `python -m <package>.coverage SCRIPT`
// turns it on around a user's script and writes the report that tells a
// backend author which kernel to write next (see the package's coverage/).
//
// Each fact is recorded where it is known:
// - The CPU fallback knows it is falling back: run_on_cpu (cpu_fallback.cpp)
//   records every call it runs -- the same calls fallback_counts() counts --
//   with its wall time, the part of it that was host views or copies, and
//   its arguments (FallbackCoverage below).
// - Every other op that reaches the device is seen by a RecordFunction
//   callback (the dispatcher's own observer hook, which torch.profiler uses
//   too), registered only while recording: an op with a kernel of the
//   backend is `native` (its device time is measured with a pair of timing
//   events on its stream), one that PyTorch decomposes into other ops is
//   `composite`, an op of another namespace with a device kernel `custom`.
//
// Off (the default), the fallback pays one relaxed load per call and every
// other op nothing: no callback is registered.
//
// coverage_table.h keeps the records, op_signature.h writes a call's
// arguments; this file holds the recording itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/macros/Macros.h>

namespace scaffold::runtime {

namespace detail {
extern std::atomic<bool> g_coverage_recording;
struct FallbackCall;
FallbackCall* begin_fallback_call(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack);
void end_fallback_call(FallbackCall* call) noexcept;
int64_t begin_fallback_cpu_work() noexcept;
void end_fallback_cpu_work(int64_t start_ns) noexcept;
} // namespace detail

inline bool coverage_recording() noexcept {
  return detail::g_coverage_recording.load(std::memory_order_relaxed);
}

// One CPU-fallback call of op `name` (qualified, "aten::add.out"), recorded
// from construction to destruction; `stack` holds the op's arguments. While
// recording, construction first waits for the op's stream (which the
// fallback does anyway), and throws what that wait throws.
class FallbackCoverage {
 public:
  FallbackCoverage(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
    if (C10_UNLIKELY(coverage_recording())) {
      call_ = detail::begin_fallback_call(name, op, stack);
    }
  }
  ~FallbackCoverage() {
    if (C10_UNLIKELY(call_ != nullptr)) {
      detail::end_fallback_call(call_);
    }
  }
  FallbackCoverage(const FallbackCoverage&) = delete;
  FallbackCoverage& operator=(const FallbackCoverage&) = delete;

 private:
  detail::FallbackCall* call_ = nullptr;
};

// The CPU kernel's own run inside a fallback (the zero-copy fallback wraps its
// redispatch to the CPU in one): the rest of the fallback's time is host-view
// overhead. Without one (ATen's copying fallback), the overhead is the time
// of the copies, the device ops the fallback calls.
class FallbackCpuWork {
 public:
  FallbackCpuWork() noexcept {
    if (C10_UNLIKELY(coverage_recording())) {
      start_ns_ = detail::begin_fallback_cpu_work();
    }
  }
  ~FallbackCpuWork() {
    if (C10_UNLIKELY(start_ns_ != 0)) {
      detail::end_fallback_cpu_work(start_ns_);
    }
  }
  FallbackCpuWork(const FallbackCpuWork&) = delete;
  FallbackCpuWork& operator=(const FallbackCpuWork&) = delete;

 private:
  int64_t start_ns_ = 0;
};

// Starts recording (keeping at most `max_signatures` distinct argument
// signatures per op), stops it, and the table so far as one JSON document
// (coverage.cpp says what it holds); clear forgets the table. Recording
// stays off in a process that never starts it. Python reaches these as
// torch.ops.scaffold_runtime._coverage_{start,stop,table,clear}.
void start_coverage(int64_t max_signatures);
void stop_coverage();
std::string coverage_table();
void clear_coverage();

} // namespace scaffold::runtime
