// Launching kernels: a compute kernel's work runs on the current stream of
// its device, after everything enqueued there before, and the call returns
// without waiting for it -- as a CUDA kernel launch does.
//
// The simulated device's kernels are host functions (ATen CPU kernels on host
// views), so a launch hands a C++ closure to the driver's drvLaunchHostFunc;
// on real hardware the closure would enqueue the device kernel instead. The
// split every kernel follows:
//
//   on the caller   checks, shapes and dtypes (a structured kernel's meta()),
//                   allocation of the outputs at their final shape, and the
//                   host views the work will read and write (views made for
//                   launched work do not wait for the stream: it orders them);
//   launched        only the computation (impl()), reading nothing from the
//                   caller's stack: capture by value, and copy ArrayRef /
//                   string_view arguments into owning containers.
//
// A kernel that cannot know its output's shape before computing it (nonzero,
// masked_select, an out= tensor of the wrong shape) waits for the stream and
// runs inline instead (host_view() waits).
//
// Lifetime: the closure owns what it captures -- host views hold references
// to the device storages -- so a tensor freed by Python while its kernel is
// still queued keeps its memory until the kernel has run. The closure is
// destroyed on the stream's worker right after it ran -- except on a stream
// being captured into a graph (capture.h): there it runs at every replay,
// and the graph destroys it (a closure must be able to run more than once).
//
// Errors: checks that need no data (dtypes, shapes, an index tensor's dtype)
// belong on the caller, as in CUDA's host code, so they raise at the call;
// Elementwise::launch runs the CPU kernel once per dtype signature on 0-dim
// host twins to get the CPU kernel's own. What launched work throws is kept
// for the device's next synchronisation (launch_errors.h); with
// SCAFFOLD_LAUNCH_BLOCKING=1 the work runs before launch() returns and its
// error is thrown by launch() itself, at the op that caused it.
#pragma once

#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <c10/macros/Macros.h>
#include <c10/util/OptionalArrayRef.h>
#include <c10/util/ThreadLocalDebugInfo.h>

namespace scaffold::runtime {

// One piece of launched work. Subclassed by launch(); exposed so that the
// non-template part (enqueueing, error capture) lives in launch.cpp.
class LaunchedWork {
 public:
  virtual ~LaunchedWork() = default;
  virtual void run() = 0;

  const char* op = nullptr; // for error messages; a string literal
  c10::DeviceIndex device = 0;
  // The launching thread's profiler state while torch.profiler records
  // memory (a free made by the closure belongs to that profile).
  std::shared_ptr<c10::ThreadLocalDebugInfo> profiler_state;
};

namespace detail {
// Without launch_blocking(): enqueues `work` on the current stream of
// work->device; the stream's worker runs and then deletes it. Throws
// (deleting it) if the driver refuses.
void launch_work(std::unique_ptr<LaunchedWork> work);
// With launch_blocking(): hands `work` to the driver, which runs it before
// returning, so it may live on the caller's stack; throws its error.
void run_work_now(LaunchedWork& work);
// drvGetLaunchBlocking's answer, 0 or 1; -1 until asked.
extern std::atomic<int> g_launch_blocking;
// How many streams are being captured into graphs (capture.h): launched
// work must then outlive its launch, even with launch blocking.
extern std::atomic<int> g_captures_underway;
bool read_launch_blocking();
} // namespace detail

// True when the driver runs every stream synchronously
// (drvGetLaunchBlocking; SCAFFOLD_LAUNCH_BLOCKING=1 for the simulated one):
// launched work runs before launch() returns. Inline: every op asks, more
// than once.
inline bool launch_blocking() {
  const int value = detail::g_launch_blocking.load(std::memory_order_relaxed);
  return C10_LIKELY(value >= 0) ? value != 0 : detail::read_launch_blocking();
}

// Enqueues `fn()` on the calling thread's current stream of `device`. `op`
// (a string literal) names the work in error messages.
template <class Fn>
void launch(c10::DeviceIndex device, const char* op, Fn&& fn) {
  struct Work final : LaunchedWork {
    explicit Work(Fn&& f) : fn(std::forward<Fn>(f)) {}
    void run() override {
      fn();
    }
    std::decay_t<Fn> fn;
  };
  if (launch_blocking() && detail::g_captures_underway.load(std::memory_order_relaxed) == 0) {
    // Runs before the driver returns: no heap object for a 16-element op.
    Work work(std::forward<Fn>(fn));
    work.op = op;
    work.device = device;
    detail::run_work_now(work);
    return;
  }
  auto work = std::make_unique<Work>(std::forward<Fn>(fn));
  work->op = op;
  work->device = device;
  detail::launch_work(std::move(work));
}

// Called from launched work: the rest of it computes with at most `threads`
// of the device's compute threads (drvLimitKernelThreads), as a GPU kernel
// launched on a small grid would. Changes nothing where work runs inline.
void limit_launched_threads(int threads);

// An owning copy of an optional list of dimensions, for a launched closure
// (an at::OptionalIntArrayRef argument points into the caller's frame):
//   [dims = OwnedDims(dim)](auto& op) { op.impl(op.input(0), dims, ...); }
class OwnedDims {
 public:
  explicit OwnedDims(at::OptionalIntArrayRef dims) : present_(dims.has_value()) {
    if (present_) {
      dims_.assign(dims->begin(), dims->end());
    }
  }
  operator at::OptionalIntArrayRef() const {
    return present_ ? at::OptionalIntArrayRef(at::IntArrayRef(dims_)) : at::OptionalIntArrayRef();
  }

 private:
  bool present_;
  std::vector<int64_t> dims_;
};

} // namespace scaffold::runtime
