// Internals shared by the simulated driver's files (not part of the API).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "scaffold_driver.h"

namespace scaffold::driver {

// Hard upper bound on devices; each reserves its own slice of address space.
constexpr int kMaxDevices = 64;
// Address space reserved per device, also the most one device can hold:
// SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB (a power of two, 1..256), default 256 GiB.
// Two ranges of device count x span are reserved (not committed) at the
// first allocation; a process under a tight address-space limit (ulimit -v,
// valgrind) needs a smaller span.
constexpr uint64_t kDefaultDeviceAddressSpan = uint64_t{256} << 30;
constexpr uint64_t kMaxDeviceAddressSpanGiB = 256;

// Configuration read once from the environment. `error` is non-empty when a
// variable is malformed; every call that depends on it then fails with
// drvErrorConfiguration and that text.
struct Config {
  int device_count = 2; // SCAFFOLD_DEVICE_COUNT
  bool protect_memory = true; // SCAFFOLD_PROTECT_MEMORY
  bool discrete_memory = false; // SCAFFOLD_DEVICE_MEMORY=discrete
  bool launch_blocking = false; // SCAFFOLD_LAUNCH_BLOCKING
  uint64_t device_span = kDefaultDeviceAddressSpan; // SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB
  int compute_threads = 1; // SCAFFOLD_DEVICE_THREADS, or cores - 1
  int compute_threads_host_waiting = 1; // SCAFFOLD_DEVICE_THREADS, or cores
  uint64_t physical_memory = 0;
  std::string error;
};
const Config& config();

// Records `message` as the calling thread's last error detail and returns
// `error` (for `return fail(...)`).
drvError_t fail(drvError_t error, std::string message);
// The OS call `what` failed with errno: drvErrorOsCall with its text.
drvError_t fail_os(const char* what);

// drvSuccess, or the configuration / device-index error.
drvError_t check_config();
drvError_t check_device(int device);
int current_device_unchecked();

// Compute threads (simulated_threads.cpp). A stream's worker runs kernels
// with an OpenMP team of config().compute_threads, and of
// config().compute_threads_host_waiting while a host thread has been asleep
// in a synchronisation for a while: the core the host keeps is idle then.
// Called by a worker before each kernel, with the number of launches queued
// on its stream (that kernel's included), and with `idle` before it waits for
// work (it then lets its extra threads go).
void size_worker_team(bool idle, uint64_t queued = 0);
// Whether a host thread that would sleep in a synchronisation with `queued`
// pieces of work left on the stream, expected to take `expected_ns`, runs
// them itself.
bool host_runs_queue(uint64_t queued, uint64_t expected_ns);
// Held by a host thread while it runs a stream's queued work itself instead
// of sleeping in a synchronisation. Its OpenMP team computes one member a
// core for the time (simulated_threads.cpp says why), its own thread count
// comes back after each piece of work (a kernel may limit it,
// drvLimitKernelThreads), and its pool goes when it is done, as does the
// placement: the thread's affinity is the one it had.
class HostRunsWork {
 public:
  HostRunsWork();
  ~HostRunsWork();
  HostRunsWork(const HostRunsWork&) = delete;
  HostRunsWork& operator=(const HostRunsWork&) = delete;
  void after_each_piece();

 private:
  cpu_set_t saved_affinity_{};
  bool placed_ = false;
};
// Held by a host thread while it sleeps until a stream or event catches up.
class HostWait {
 public:
  HostWait();
  ~HostWait();
  HostWait(const HostWait&) = delete;
  HostWait& operator=(const HostWait&) = delete;
};

// Streams (simulated_streams.cpp).
// Waits for every stream of `device`.
drvError_t synchronize_device(int device);
// drvErrorStreamCaptureUnsupported when a stream of `device` is being
// captured (its capture is invalidated): `what` synchronises with the host.
drvError_t refuse_if_device_captured(int device, const char* what);

// Memory (simulated_memory.cpp): the host address of [device_ptr, +size),
// or nullptr when that is not device memory.
void* translate(const void* device_ptr, size_t size) noexcept;
// Set while the calling thread runs launched work (a kernel: the device's
// code), which may address device memory in discrete mode; host code may not.
class RunningDeviceWork {
 public:
  RunningDeviceWork() noexcept;
  ~RunningDeviceWork();
  RunningDeviceWork(const RunningDeviceWork&) = delete;
  RunningDeviceWork& operator=(const RunningDeviceWork&) = delete;

 private:
  bool was_running_;
};

// Activity tracing (simulated_activity.cpp). The stream workers time the
// work that was enqueued while tracing was on and keep a record of it.
extern std::atomic<bool> g_activity_enabled;
inline bool activity_enabled() noexcept {
  return g_activity_enabled.load(std::memory_order_relaxed);
}
// The calling thread's innermost pushed correlation id (0: none).
uint64_t current_correlation_id() noexcept;
// The records' clock.
uint64_t activity_clock_ns() noexcept;
void keep_activity(const drvActivityRecord& record) noexcept;
// Time `device`'s streams spent running traced work (run_traced).
void add_busy_time(int device, uint64_t ns) noexcept;

// The copy engine (simulated_copy.cpp): the bytes of a copy (memmove
// semantics: the ranges may overlap) or a memset run by stream work, split
// across helper threads when large.
void copy_bytes(void* dst, const void* src, size_t size);
void set_bytes(void* dst, int value, size_t size);
// Copies of the `pattern_size` bytes at `pattern` over [dst, dst + size).
void fill_pattern(void* dst, const void* pattern, size_t pattern_size, size_t size);

} // namespace scaffold::driver
