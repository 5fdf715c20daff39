// The CPU fallback's observer hook. A tool that wants to see every call the
// fallback runs on the CPU (the op coverage report, coverage.cpp) installs a
// FallbackObserver; the fallbacks (cpu_fallback.cpp, host_view_fallback.cpp)
// report to whichever is installed. The hook lives apart from the tools so
// the fallback links and runs without them: with no observer installed, a
// fallback call pays one relaxed load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/macros/Macros.h>

namespace scaffold::runtime {

// What an observer does around one fallback call. begin_call returns the
// observer's record of the call (nullptr: not recorded), which end_call gets
// back; begin_call may throw (it is called before the CPU kernel runs).
// begin_cpu_work/end_cpu_work bracket the CPU kernel's own run inside a call.
struct FallbackObserver {
  void* (*begin_call)(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack);
  void (*end_call)(void* call) noexcept;
  int64_t (*begin_cpu_work)() noexcept;
  void (*end_cpu_work)(int64_t start_ns) noexcept;
};

// Installs `observer` (which must outlive its installation), or removes the
// installed one with nullptr.
void set_fallback_observer(const FallbackObserver* observer) noexcept;

// A check every fallback call passes before the CPU computes (it throws to
// refuse the call): the device's stream capture refuses the fallback while a
// capture is under way, since a replay would not run it. Installed by the
// registration (registration.cpp), so the fallback links without the streams.
using FallbackCheck = void (*)(const std::string& name);
void set_fallback_check(FallbackCheck check) noexcept;

namespace detail {
extern std::atomic<const FallbackObserver*> g_fallback_observer;
extern std::atomic<FallbackCheck> g_fallback_check;
} // namespace detail

inline void check_fallback_allowed(const std::string& name) {
  const FallbackCheck check = detail::g_fallback_check.load(std::memory_order_relaxed);
  if (C10_UNLIKELY(check != nullptr)) {
    check(name);
  }
}

// One CPU-fallback call of op `name` (qualified, "aten::add.out") from
// construction to destruction; `stack` holds the op's arguments.
class ObservedFallbackCall {
 public:
  ObservedFallbackCall(const std::string& name, const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
    const FallbackObserver* observer = detail::g_fallback_observer.load(std::memory_order_relaxed);
    if (C10_UNLIKELY(observer != nullptr)) {
      call_ = observer->begin_call(name, op, stack);
      observer_ = observer;
    }
  }
  ~ObservedFallbackCall() {
    if (C10_UNLIKELY(call_ != nullptr)) {
      observer_->end_call(call_);
    }
  }
  ObservedFallbackCall(const ObservedFallbackCall&) = delete;
  ObservedFallbackCall& operator=(const ObservedFallbackCall&) = delete;

 private:
  const FallbackObserver* observer_ = nullptr;
  void* call_ = nullptr;
};

// The CPU kernel's own run inside a fallback (the zero-copy fallback wraps its
// redispatch to the CPU in one): the rest of the fallback's time is host-view
// overhead. Without one (ATen's copying fallback), the overhead is the time
// of the copies, the device ops the fallback calls.
class FallbackCpuWork {
 public:
  FallbackCpuWork() noexcept {
    const FallbackObserver* observer = detail::g_fallback_observer.load(std::memory_order_relaxed);
    if (C10_UNLIKELY(observer != nullptr)) {
      start_ns_ = observer->begin_cpu_work();
      observer_ = observer;
    }
  }
  ~FallbackCpuWork() {
    if (C10_UNLIKELY(start_ns_ != 0)) {
      observer_->end_cpu_work(start_ns_);
    }
  }
  FallbackCpuWork(const FallbackCpuWork&) = delete;
  FallbackCpuWork& operator=(const FallbackCpuWork&) = delete;

 private:
  const FallbackObserver* observer_ = nullptr;
  int64_t start_ns_ = 0;
};

} // namespace scaffold::runtime
