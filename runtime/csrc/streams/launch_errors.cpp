#include "launch_errors.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include <c10/macros/Macros.h>
#include <c10/util/Exception.h>

#include "device.h"

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

} // namespace

void keep_launch_error(c10::DeviceIndex device, const char* op, std::exception_ptr error) noexcept {
  PendingError& slot = pending_error(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.error) {
    ++slot.dropped;
    return;
  }
  slot.error = std::move(error);
  slot.op = op;
  slot.pending.store(true, std::memory_order_release);
}

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
  rethrow_with_context(error, where);
}

[[noreturn]] void rethrow_with_context(const std::exception_ptr& error, const std::string& where) {
  try {
    std::rethrow_exception(error);
  } catch (c10::Error& e) {
    e.add_context(where);
    throw;
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what(), "\n", where);
  }
}

} // namespace scaffold::runtime
