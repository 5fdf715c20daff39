#include "launch.h"

#include <atomic>
#include <exception>
#include <string>

#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <c10/util/Exception.h>

#include "capture.h"
#include "device.h"
#include "launch_errors.h"
#include "memory_history.h"
#include "profiler.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// Kernels run below autograd, as a CPU kernel reached through the
// dispatcher does: host views carry no autograd state, and an ATen helper a
// CPU kernel calls must not record a graph or refuse an inference-mode
// tensor on a worker thread, which is in neither mode.
void run_below_autograd(LaunchedWork& work) {
  // Work run at its launch (launch blocking) is usually below autograd
  // already: the dispatcher's autograd and ADInplaceOrView kernels exclude
  // those keys before calling the op's kernel.
  if (c10::impl::tls_local_dispatch_key_set().excluded_.isSupersetOf(
          c10::autograd_dispatch_keyset_with_ADInplaceOrView)) {
    work.run();
    return;
  }
  c10::impl::ExcludeDispatchKeyGuard below_autograd(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
  work.run();
}

// Runs one launched closure, keeping what it throws for the next
// synchronisation. It runs as on a stream's worker also where a host thread
// runs the queue itself (in a synchronisation): with a fresh thread's
// dispatch state below autograd (no Python mode, no CPU autocast the
// synchronising code may have on: host views are CPU tensors), and without
// recording the CPU ops it computes with as the host's ops in a profile.
void run_work(LaunchedWork& work) noexcept {
  const StreamWorkScope stream_work;
  const c10::impl::ForceDispatchKeyGuard worker_keys(
      c10::default_included_set, c10::default_excluded_set | c10::autograd_dispatch_keyset_with_ADInplaceOrView);
  const at::RecordFunctionGuard not_host_ops(false);
  try {
    work.run();
  } catch (...) {
    keep_launch_error(work.device, work.op, std::current_exception());
  }
}

// The driver's host function: runs one launched closure where the stream's
// work runs (its worker, or a host thread that runs the queue in a
// synchronisation) and deletes it there (dropping what it captured, e.g. the
// last reference to a tensor Python freed meanwhile). While torch.profiler
// records memory, the launching thread's profiler state comes along, so a
// free the closure makes here is reported to that profile.
void run_launched(void* user_data) noexcept {
  std::unique_ptr<LaunchedWork> work(static_cast<LaunchedWork*>(user_data));
  if (C10_UNLIKELY(work->profiler_state != nullptr)) {
    const c10::DebugInfoGuard profiling(std::move(work->profiler_state));
    run_work(*work);
    work.reset();
    return;
  }
  run_work(*work);
}

// The host function of work launched on a captured stream: it runs at each
// replay, and the graph that keeps it deletes it.
void run_captured(void* user_data) noexcept {
  run_work(*static_cast<LaunchedWork*>(user_data));
}

// Work the caller owns (launch_blocking()), and what it threw: handed back
// to run_work_now, which raises it at the op instead of keeping it for the
// device's next synchronisation.
struct BorrowedWork {
  LaunchedWork* work;
  std::exception_ptr error;
};

void run_borrowed(void* user_data) noexcept {
  auto& borrowed = *static_cast<BorrowedWork*>(user_data);
  try {
    run_below_autograd(*borrowed.work);
  } catch (...) {
    borrowed.error = std::current_exception();
  }
}

// Raises what work run at its launch threw, naming why it ran there.
void raise_at_launch(const BorrowedWork& borrowed, const char* why) {
  const LaunchedWork& work = *borrowed.work;
  rethrow_with_context(
      borrowed.error,
      "(raised by " + std::string(work.op) + ", a kernel launched on " + device_string(work.device) +
          " and run at its launch: " + why + ")");
}

} // namespace

namespace detail {

std::atomic<int> g_launch_blocking{-1};
std::atomic<int> g_captures_underway{0};

bool read_launch_blocking() {
  int value = 0;
  SCAFFOLD_DRIVER_CHECK(drvGetLaunchBlocking(&value));
  g_launch_blocking.store(value != 0 ? 1 : 0, std::memory_order_relaxed);
  return value != 0;
}

void launch_work(std::unique_ptr<LaunchedWork> work) {
  const c10::DeviceIndex device = work->device;
  drvStream_t stream = current_driver_stream(device);
  const DeviceActivityScope activity(work->op, device);
  if (capture_underway() && launch_captured(stream, &run_captured, work)) {
    return;
  }
  if (C10_UNLIKELY(c10::memoryProfilingEnabled())) {
    work->profiler_state = c10::ThreadLocalDebugInfo::current();
  }
  LaunchedWork* raw = work.release();
  const drvError_t status = drvLaunchHostFunc(stream, &run_launched, raw);
  if (status != drvSuccess) {
    delete raw; // the driver did not take it
    SCAFFOLD_DRIVER_CHECK(status);
  }
}

void run_work_now(LaunchedWork& work) {
  BorrowedWork borrowed{&work, nullptr};
  const DeviceActivityScope activity(work.op, work.device);
  SCAFFOLD_DRIVER_CHECK(drvLaunchHostFunc(current_driver_stream(work.device), &run_borrowed, &borrowed));
  if (C10_UNLIKELY(borrowed.error != nullptr)) { // it ran: report at the op
    raise_at_launch(borrowed, "SCAFFOLD_LAUNCH_BLOCKING=1");
  }
}

} // namespace detail

void limit_launched_threads(int threads) {
  SCAFFOLD_DRIVER_CHECK(drvLimitKernelThreads(threads));
}

} // namespace scaffold::runtime
