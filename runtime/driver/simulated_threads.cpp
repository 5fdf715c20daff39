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
// sleep.
//
// Where the worker would leave the host's core idle, a host thread about to
// sleep in a synchronisation runs the queued work itself (HostRunsWork), with
// its own team. That team is placed one thread a core while it computes: the
// virtual machine these rules were measured on packs threads that look idle
// onto one core (its kernel's sched_vcpu_pack), and a team woken after a
// pause ran both its threads on one core, at half speed, until they were
// placed (measured 2026-11-29: benchmarks/README.md as of that day, in git).
//
// The OpenMP runtime is the one the process already loaded (ATen's);
// the driver links none of its own, and without one there is nothing to size.
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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
// With at least this many queued, a host thread about to sleep in a
// synchronisation runs them itself instead (HostRunsWork), its team placed
// one thread a core: the rest of the step computes as on the CPU, neither on
// the worker's one core (for kLendHostCoreAfter, below kLendHostCoreQueued)
// nor on a lent team packed onto one core after an idle spell (vit_tiny's
// step, mostly matrix products: 1.3-2.4x the CPU's before, 1.07-1.15x after,
// in bench_models.py; lending at once still serves other sleeps). With
// fewer left (the end of a step the host bounds: GPT-2's last optimizer
// kernels) the worker is done sooner than a team wakes the idle core
// (0.6-1 ms measured here).
constexpr uint64_t kHostRunsQueued = 32;
// And only when that work is expected to take this long (the queue's length
// times the stream's recent kernel time): two cores save half of it, which
// must beat the 0.6-1 ms of waking the idle one. Below it (most of swin's
// steps end with 60-100 kernels of 5-30 us queued) the worker keeps them.
constexpr std::chrono::nanoseconds kHostRunsWorkOf = std::chrono::milliseconds(2);

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
// A host thread's own count while it runs stream work (HostRunsWork), else 0.
thread_local int t_host_work_threads = 0;

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

bool host_runs_queue(uint64_t queued, uint64_t expected_ns) {
  const Config& cfg = config();
  return cfg.compute_threads_host_waiting > cfg.compute_threads && queued >= kHostRunsQueued &&
      expected_ns >= static_cast<uint64_t>(kHostRunsWorkOf.count());
}

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

namespace {

// libgomp's entry for a parallel region (what `#pragma omp parallel`
// compiles to), found in the process like the omp_* calls: the driver runs
// one region of its own to place a host thread's team.
using GompParallel = void (*)(void (*)(void*), void*, unsigned, unsigned);

struct TeamPlacement {
  std::vector<int> cpus; // member i runs on cpus[i % size]
};

void place_team_member(void* data) {
  static const auto thread_num = openmp_function<int (*)()>("omp_get_thread_num");
  const auto& placement = *static_cast<const TeamPlacement*>(data);
  const int member = thread_num != nullptr ? thread_num() : 0;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(placement.cpus[static_cast<size_t>(member) % placement.cpus.size()], &cpus);
  sched_setaffinity(0, sizeof(cpus), &cpus);
}

} // namespace

HostRunsWork::HostRunsWork() {
  const OpenMpCalls& omp = openmp();
  static const auto gomp_parallel = openmp_function<GompParallel>("GOMP_parallel");
  const int team = omp.get_max_threads != nullptr ? omp.get_max_threads() : 1;
  t_host_work_threads = team;
  const int here = sched_getcpu();
  if (gomp_parallel == nullptr || team < 2 || here < 0 ||
      sched_getaffinity(0, sizeof(saved_affinity_), &saved_affinity_) != 0) {
    return;
  }
  // The team starts on the core the host thread is on, then the other
  // cores it may use, one member each.
  TeamPlacement placement;
  placement.cpus.push_back(here);
  for (int cpu = 0; cpu < CPU_SETSIZE && placement.cpus.size() < static_cast<size_t>(team); ++cpu) {
    if (cpu != here && CPU_ISSET(cpu, &saved_affinity_)) {
      placement.cpus.push_back(cpu);
    }
  }
  if (placement.cpus.size() < 2) {
    return;
  }
  gomp_parallel(&place_team_member, &placement, static_cast<unsigned>(team), 0);
  placed_ = true;
}

HostRunsWork::~HostRunsWork() {
  // Its pool would spin on the cores the workers compute on next.
  release_openmp_pool();
  if (placed_) {
    sched_setaffinity(0, sizeof(saved_affinity_), &saved_affinity_);
  }
  t_host_work_threads = 0;
}

void HostRunsWork::after_each_piece() {
  const OpenMpCalls& omp = openmp();
  if (omp.get_max_threads != nullptr && omp.get_max_threads() != t_host_work_threads) {
    omp.set_num_threads(t_host_work_threads); // a kernel limited itself
  }
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
  if (omp.set_num_threads == nullptr || omp.get_max_threads == nullptr || threads >= omp.get_max_threads()) {
    return drvSuccess;
  }
  // The worker sizes its team again before the next kernel; a host thread
  // running stream work gets its own count back after this piece of work.
  if (t_worker_team > 0 || t_host_work_threads > 0) {
    omp.set_num_threads(threads);
  }
  return drvSuccess;
}

} // extern "C"
