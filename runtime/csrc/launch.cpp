#include "launch.h"

#include <array>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Exception.h>

#include "device.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// The first error of launched work on one device, until reported.
struct PendingError {
  std::atomic<bool> pending{false}; // fast path of check_launch_errors
  std::mutex mutex;
  std::exception_ptr error;
  const char* op = nullptr;
  uint64_t dropped = 0; // further errors while this one was pending
};

PendingError& pending_error(c10::DeviceIndex device) {
  static auto* all = new std::array<PendingError, kMaxDevices>(); // leaked: workers use it at exit
  return (*all)[device];
}

void keep_error(const LaunchedWork& work, std::exception_ptr error) noexcept {
  PendingError& slot = pending_error(work.device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.error) {
    ++slot.dropped;
    return;
  }
  slot.error = std::move(error);
  slot.op = work.op;
  slot.pending.store(true, std::memory_order_release);
}

// Runs one launched closure, keeping what it throws for the next
// synchronisation.
void run_work(LaunchedWork& work) noexcept {
  try {
    // Kernels run below autograd, as a CPU kernel reached through the
    // dispatcher does: host views carry no autograd state, and an ATen
    // helper a CPU kernel calls must not record a graph or refuse an
    // inference-mode tensor on this thread, which is in neither mode.
    c10::impl::ExcludeDispatchKeyGuard below_autograd(c10::autograd_dispatch_keyset_with_ADInplaceOrView);
    work.run();
  } catch (...) {
    keep_error(work, std::current_exception());
  }
}

// The driver's host function: runs one launched closure on the stream's
// worker and deletes it there (dropping what it captured, e.g. the last
// reference to a tensor Python freed meanwhile).
void run_launched(void* user_data) noexcept {
  std::unique_ptr<LaunchedWork> work(static_cast<LaunchedWork*>(user_data));
  run_work(*work);
}

// The same for work the caller owns (launch_blocking()).
void run_borrowed(void* user_data) noexcept {
  run_work(*static_cast<LaunchedWork*>(user_data));
}

} // namespace

bool launch_blocking() {
  static const bool blocking = [] {
    int value = 0;
    SCAFFOLD_DRIVER_CHECK(drvGetLaunchBlocking(&value));
    return value != 0;
  }();
  return blocking;
}

namespace detail {

void launch_work(std::unique_ptr<LaunchedWork> work) {
  const c10::DeviceIndex device = work->device;
  drvStream_t stream = current_driver_stream(device);
  LaunchedWork* raw = work.release();
  const drvError_t status = drvLaunchHostFunc(stream, &run_launched, raw);
  if (status != drvSuccess) {
    delete raw; // the driver did not take it
    SCAFFOLD_DRIVER_CHECK(status);
  }
}

void run_work_now(LaunchedWork& work) {
  SCAFFOLD_DRIVER_CHECK(drvLaunchHostFunc(current_driver_stream(work.device), &run_borrowed, &work));
  check_launch_errors(work.device); // it ran: report at the op
}

} // namespace detail

void check_launch_errors(c10::DeviceIndex device) {
  PendingError& slot = pending_error(device);
  if (C10_LIKELY(!slot.pending.load(std::memory_order_acquire))) {
    return;
  }
  std::exception_ptr error;
  const char* op = nullptr;
  uint64_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(slot.mutex);
    error = std::exchange(slot.error, nullptr);
    op = slot.op;
    dropped = std::exchange(slot.dropped, 0);
    slot.pending.store(false, std::memory_order_relaxed);
  }
  if (!error) {
    return; // another thread reported it
  }
  const std::string where = "(raised by " + std::string(op) + ", a kernel launched on " +
      device_string(device) + " and reported at the next synchronisation with it" +
      (dropped > 0 ? "; " + std::to_string(dropped) + " later error(s) of launched work were dropped" : "") +
      ". Run with SCAFFOLD_LAUNCH_BLOCKING=1 to raise it at the launching call.)";
  try {
    std::rethrow_exception(error);
  } catch (c10::Error& e) {
    e.add_context(where); // keeps the original type (IndexError, ...) and message
    throw;
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what(), "\n", where);
  }
}

} // namespace scaffold::runtime
