// The simulated device's compute threads: the OpenMP team each stream's
// worker runs its kernels with, on the host's cores.
//
// While the host thread works (launching kernels, running Python) the
// worker's team leaves it a core (config().compute_threads). A host thread
// asleep in a synchronisation leaves that core idle; once it has slept for a
// while, or at once when much work is queued, the worker's kernels take
// every core (compute_threads_host_waiting), as a GPU's kernels never shared
// the CPU with the program in the first place. A kernel may ask for fewer
// (drvLimitKernelThreads): small ones run faster on one thread.
//
// libgomp keeps the threads of a thread's last parallel region in a pool
// between regions, spinning for a while before they sleep, and it counts every
// pooled thread: with more of them than cores it stops spinning in every team,
// so each parallel region wakes its team from sleep. Hence the pools are let
// go: the worker's extra threads once the host works again (they would spin on
// its core) or the device idles, and a host thread's own pool when it starts to
// sleep. The OpenMP runtime is the one the process already loaded (ATen's);
// the driver links none of its own, and without one there is nothing to size.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "simulated.h"

namespace scaffold::driver {
namespace {

// How long a host thread must have slept before the workers take its core. A
// shorter sleep is the end of a step the host bounds: there the extra thread
// costs more than it gains (it starts, small kernels split across two threads
// run slower than on one), and its comings and goings every step unsettled
// the scheduler (a 3.6 ms step took 4-13 ms when lending after 1 ms).
constexpr std::chrono::nanoseconds kLendHostCoreAfter = std::chrono::milliseconds(5);
// Or as soon as it sleeps with this many launches queued: the device has a
// long way to go (a training step's backward pass and optimizer), not the
// end of a step the host bounds. Measured with 16-256: convnext_atto's eager
// step 31.6 -> 28.5 ms, regnetx_002's 29 -> 24.5 ms with 64.
constexpr uint64_t kLendHostCoreQueued = 64;

constexpr int kOmpPauseSoft = 1; // omp_pause_resource_kind

template <typename Fn>
Fn openmp_function(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// The OpenMP runtime's thread-count calls, null where the process has none.
struct OpenMpCalls {
  void (*set_num_threads)(int) = openmp_function<void (*)(int)>("omp_set_num_threads");
  int (*get_max_threads)() = openmp_function<int (*)()>("omp_get_max_threads");
  int (*pause_resource_all)(int) = openmp_function<int (*)(int)>("omp_pause_resource_all");
};

const OpenMpCalls& openmp() {
  static const OpenMpCalls functions;
  return functions;
}

// Lets the calling thread's pooled OpenMP threads go (OpenMP 5's
// omp_pause_resource_all pauses the calling thread's pool in libgomp).
void release_openmp_pool() {
  if (openmp().pause_resource_all != nullptr) {
    openmp().pause_resource_all(kOmpPauseSoft);
  }
}

// The count size_worker_team last set on this thread: 0 on every thread but
// the streams' workers.
thread_local int t_worker_team = 0;

std::atomic<int> g_sleeping_host_threads{0};
std::atomic<uint64_t> g_host_sleep_started_ns{0}; // when the count last left 0 (activity_clock_ns)

bool host_core_idle(uint64_t queued) {
  if (g_sleeping_host_threads.load(std::memory_order_relaxed) == 0) {
    return false;
  }
  if (queued >= kLendHostCoreQueued) {
    return true;
  }
  // Signed: another host thread may have stamped a start after this read of the clock.
  const uint64_t started = g_host_sleep_started_ns.load(std::memory_order_relaxed);
  const auto slept = static_cast<int64_t>(activity_clock_ns() - started);
  return slept >= kLendHostCoreAfter.count();
}

} // namespace

void size_worker_team(bool idle, uint64_t queued) {
  const OpenMpCalls& omp = openmp();
  if (omp.set_num_threads == nullptr) {
    return;
  }
  const Config& cfg = config();
  const int want = !idle && host_core_idle(queued) ? cfg.compute_threads_host_waiting : cfg.compute_threads;
  // Read back as well as remembered: ATen sets a thread's count the first
  // time the thread runs a parallel kernel (to torch.set_num_threads' value
  // when the program called it), so the count can change under the worker;
  // and a kernel that limited itself (drvLimitKernelThreads) left the pool
  // of the count set before it.
  const int read_back = omp.get_max_threads != nullptr ? omp.get_max_threads() : want;
  const int have = std::max(read_back, t_worker_team);
  if (want < have) {
    release_openmp_pool();
  }
  omp.set_num_threads(want);
  t_worker_team = want;
}

HostWait::HostWait() {
  release_openmp_pool();
  if (g_sleeping_host_threads.fetch_add(1, std::memory_order_relaxed) == 0) {
    g_host_sleep_started_ns.store(activity_clock_ns(), std::memory_order_relaxed);
  }
}

HostWait::~HostWait() {
  g_sleeping_host_threads.fetch_sub(1, std::memory_order_relaxed);
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

drvError_t drvLimitKernelThreads(int threads) {
  if (threads < 1) {
    return fail(drvErrorInvalidValue, "drvLimitKernelThreads: threads must be at least 1, got " + std::to_string(threads));
  }
  const OpenMpCalls& omp = openmp();
  // The worker sizes its team again before the next kernel.
  if (t_worker_team > 0 && omp.set_num_threads != nullptr && omp.get_max_threads != nullptr &&
      threads < omp.get_max_threads()) {
    omp.set_num_threads(threads);
  }
  return drvSuccess;
}

} // extern "C"
