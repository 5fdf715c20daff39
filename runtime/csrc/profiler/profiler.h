// torch.profiler on the device: the device's own timing of every kernel,
// copy and memset, on its stream, correlated with the op that launched it.
//
// The driver times the work (drvActivity* in driver/scaffold_driver.h, as
// CUPTI does for CUDA); profiler.cpp hands its records to Kineto, PyTorch's
// profiling engine, as a Kineto activity-profiler plugin (registered with
// REGISTER_PRIVATEUSE1_PROFILER where the torch headers have it, directly
// with libkineto's plugin list elsewhere). So
// torch.profiler.profile(activities=[CPU, PrivateUse1]) shows each kernel in
// prof.events(), key_averages() (device_time_total) and the chrome trace,
// under the op that launched it, with the host-side launch call and the
// flow arrow between them. profiler.cpp also registers PyTorch's
// PrivateUse1 profiler stubs (device events around each op), which the
// legacy profiler (use_kineto=False) uses. A driver that cannot time work
// gives host-side events only, and the first profile warns saying so.
//
// The runtime's side is DeviceActivityScope: each place that enqueues
// device work names it while the profiler runs.
#pragma once

#include <atomic>
#include <cstdint>

#include <c10/core/Device.h>
#include <c10/macros/Macros.h>

namespace scaffold::runtime {

namespace detail {
// True while a profile that records device activity is running.
extern std::atomic<bool> g_device_tracing;
bool begin_device_activity(const char* name, c10::DeviceIndex device, const char* driver_call) noexcept;
void end_device_activity() noexcept;
int64_t begin_inline_kernel(c10::DeviceIndex device);
void end_inline_kernel(const char* name, c10::DeviceIndex device, int64_t start_ns) noexcept;
} // namespace detail

inline bool device_tracing() noexcept {
  return detail::g_device_tracing.load(std::memory_order_relaxed);
}

// Names the device work that the calling thread enqueues during its life
// (one kernel launch, one copy): in a profile, the kernel is called `name`
// (a string literal: an op name such as "add.out"), the host-side event of
// the enqueueing call `driver_call` (a string literal), and both are linked
// to the op running on this thread. Costs one relaxed load when no profile
// runs.
class DeviceActivityScope {
 public:
  DeviceActivityScope(
      const char* name,
      c10::DeviceIndex device,
      const char* driver_call = "drvLaunchHostFunc") noexcept {
    if (C10_UNLIKELY(device_tracing())) {
      active_ = detail::begin_device_activity(name, device, driver_call);
    }
  }
  ~DeviceActivityScope() {
    if (C10_UNLIKELY(active_)) {
      detail::end_device_activity();
    }
  }
  DeviceActivityScope(const DeviceActivityScope&) = delete;
  DeviceActivityScope& operator=(const DeviceActivityScope&) = delete;

 private:
  bool active_ = false;
};

// Times a kernel that the simulated device runs inline, on the calling
// thread, after waiting for the current stream (KernelCall, or
// FunctionalOperands after wait(): an output whose shape depends on the
// data, an out= tensor to resize, a CPU kernel that allocates its own
// result): from begin() to the end of its owner's life. In a profile it is a
// kernel on that stream like a launched one, timed by the runtime instead of
// the driver (its "inline" field says so), named `name` or, when that is
// null, after the op it runs under. begin() waits for the stream while a
// profile runs, so the kernel's time is its own. Moving the owner (into a
// launched closure: the work was launched after all) cancels the timing.
class InlineKernelTiming {
 public:
  InlineKernelTiming() = default;
  void begin(const char* name, c10::DeviceIndex device) {
    if (C10_UNLIKELY(device_tracing()) && start_ns_ == 0) {
      name_ = name;
      device_ = device;
      start_ns_ = detail::begin_inline_kernel(device);
    }
  }
  ~InlineKernelTiming() {
    if (C10_UNLIKELY(start_ns_ != 0)) {
      detail::end_inline_kernel(name_, device_, start_ns_);
    }
  }
  InlineKernelTiming(InlineKernelTiming&& other) noexcept {
    other.start_ns_ = 0;
  }
  InlineKernelTiming& operator=(InlineKernelTiming&& other) noexcept {
    start_ns_ = 0;
    other.start_ns_ = 0;
    return *this;
  }
  InlineKernelTiming(const InlineKernelTiming&) = delete;
  InlineKernelTiming& operator=(const InlineKernelTiming&) = delete;

 private:
  const char* name_ = nullptr;
  c10::DeviceIndex device_ = 0;
  int64_t start_ns_ = 0;
};

// Whether the driver can time device work (drvActivityEnable). Without it a
// profile has host-side events only.
bool device_activity_supported();

// Registers the profiler stubs (and, where Kineto is available, the
// activity-profiler plugin) with PyTorch; called once when the runtime
// loads (registration.cpp).
void register_profiler();

} // namespace scaffold::runtime
