// The simulated driver: streams (one worker thread each, running its work in
// order), events, and the copies and kernels enqueued on streams.
//
// SCAFFOLD_LAUNCH_BLOCKING=1 runs every piece of work on the calling thread
// before the call returns, like CUDA_LAUNCH_BLOCKING=1: a bug that goes away
// with it is a missing synchronisation.
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "simulated.h"

namespace scaffold::driver {
namespace {

// One piece of stream work, stored by value in the stream's queue:
// enqueueing a copy, a memset or a host function allocates nothing.
enum class WorkKind : uint8_t { HostFunction, Copy, Set, Fill, RecordEvent, WaitEvent };

} // namespace
} // namespace scaffold::driver

struct CaptureState;

// For each stream of a capture, how many of its captured nodes are ordered
// before a point of the capture (a vector clock): the stream's own order and
// the events it waited on.
using CaptureClock = std::map<drvStream_t, uint64_t>;

struct EventState {
  unsigned flags = 0;
  std::mutex mutex;
  std::condition_variable done;
  uint64_t recorded = 0; // generation of the last record
  uint64_t completed = 0; // generation of the last completed record
  std::chrono::steady_clock::time_point completed_at;
  // Set by a record on a captured stream, cleared by a record elsewhere: the
  // record is a point of that capture (what its stream had captured by
  // then), not work that runs; a stream that waits on it joins the capture.
  // Stale once the capture ended: the event is then as before the capture.
  std::shared_ptr<CaptureState> captured_in;
  CaptureClock captured_at;

  void complete(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex);
    if (generation > completed) {
      completed = generation;
      completed_at = std::chrono::steady_clock::now();
    }
    done.notify_all();
  }

  void wait_for(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return completed >= generation; });
  }
};

namespace scaffold::driver {
namespace {

struct Work {
  WorkKind kind = WorkKind::HostFunction;
  int value = 0; // Set
  void* dst = nullptr; // Copy, Set, Fill; HostFunction: its user data
  const void* src = nullptr; // Copy
  size_t size = 0; // Copy, Set, Fill
  std::array<unsigned char, 16> pattern{}; // Fill
  uint8_t pattern_size = 0; // Fill
  void (*fn)(void*) = nullptr; // HostFunction
  std::shared_ptr<EventState> event; // RecordEvent, WaitEvent
  uint64_t generation = 0; // RecordEvent, WaitEvent
  drvMemcpyKind copy_kind = drvMemcpyDeviceToDevice; // Copy
  // Enqueued while activity tracing was on: timed when it runs, with the
  // enqueuing thread's correlation id.
  bool traced = false;
  uint64_t correlation_id = 0;

  void run() {
    switch (kind) {
      case WorkKind::HostFunction: {
        const RunningDeviceWork device_code;
        fn(dst);
        break;
      }
      case WorkKind::Copy:
        copy_bytes(dst, src, size);
        break;
      case WorkKind::Set:
        set_bytes(dst, value, size);
        break;
      case WorkKind::Fill:
        fill_pattern(dst, pattern.data(), pattern_size, size);
        break;
      case WorkKind::RecordEvent:
        event->complete(generation);
        break;
      case WorkKind::WaitEvent:
        event->wait_for(generation);
        break;
    }
  }

  // Runs the work; a traced kernel, copy or memset leaves an activity
  // record. Returns how long it ran when traced (0 otherwise).
  uint64_t run_traced(drvStream_t stream, int device) {
    if (!traced) {
      run();
      return 0;
    }
    const uint64_t start = activity_clock_ns();
    run();
    const uint64_t end = activity_clock_ns();
    if (kind == WorkKind::HostFunction || kind == WorkKind::Copy || kind == WorkKind::Set || kind == WorkKind::Fill) {
      drvActivityRecord record{};
      record.kind = kind == WorkKind::HostFunction ? drvActivityKernel
          : kind == WorkKind::Copy                 ? drvActivityMemcpy
                                                   : drvActivityMemset;
      record.device = device;
      record.stream = stream;
      record.correlation_id = correlation_id;
      record.start_ns = start;
      record.end_ns = end;
      record.bytes = kind == WorkKind::HostFunction ? 0 : size;
      record.copy_kind = copy_kind;
      keep_activity(record);
    }
    return end - start;
  }
};

// How long a worker with nothing to do, and a host thread synchronising,
// poll before they sleep on a condition variable. Launches come in bursts
// (a training step enqueues hundreds of kernels), and waking a sleeping
// thread costs a system call on both sides -- more than a small kernel.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(50);

constexpr uint64_t kNoSyncTarget = UINT64_MAX;

// A stream's mean kernel time follows its last ~8 kernels.
constexpr int64_t kKernelTimeWeight = 8;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

} // namespace
} // namespace scaffold::driver

using scaffold::driver::Work;

// A capture under way, begun on one stream (drvStreamBeginCapture) and joined
// by every stream that waits on an event recorded in it (CUDA's fork and
// join). Its work is one chain, in enqueue order: every dependency -- a
// stream's own order, an event waited on -- points to work enqueued before,
// so running the chain in order keeps them all. Locked after a stream's
// mutex, before an event's.
struct CaptureState {
  std::mutex mutex;
  int device = 0;
  drvStream_t origin = nullptr;
  std::vector<Work> nodes;
  // Set by the first call the capture does not permit (its message): the
  // capture then records nothing more and ends without a graph.
  std::string invalidated;
  bool ended = false;
  // Per stream of the capture (the origin and the streams that joined it):
  // the captured work ordered before its next node. The capture ends joined
  // when the origin's clock covers every other stream's own nodes.
  std::map<drvStream_t, CaptureClock> clocks;
};

// A capture's recorded work, in enqueue order.
struct drvGraph_st {
  int device = 0;
  std::vector<Work> nodes;
};

struct drvGraphExec_st {
  int device = 0;
  std::vector<Work> nodes;
};

// Handles are the structs the C API names; their state is shared with the
// work that refers to them, so destroying a handle with work still queued is
// safe.
struct drvStream_st {
  int device = 0;
  int priority = 0;
  bool is_default = false;

  std::mutex mutex;
  std::condition_variable work_ready; // the worker sleeps on it
  std::condition_variable work_done; // synchronize() sleeps on it
  // Pending work, appended under `mutex`. The worker swaps the whole queue
  // for its (empty) batch in one locked step and runs the batch without the
  // lock, so a launching thread and the worker rarely contend; both vectors
  // keep their capacity (no allocation once warm).
  std::vector<Work> queue;
  std::vector<Work> batch; // the worker's
  std::vector<Work> host_batch; // a host thread's that runs the queue (host_running)
  uint64_t enqueued = 0;
  std::atomic<uint64_t> enqueued_hint{0}; // `enqueued`, for lock-free polling
  std::atomic<uint64_t> completed{0};
  std::atomic<bool> paused{false};
  // A host thread that would sleep in synchronize() runs the queued work
  // itself, with its own OpenMP team, as the CPU runs an op: the worker
  // hands over between two pieces of work and waits while this is set.
  std::atomic<bool> host_running{false};
  // A moving mean of this stream's recent kernels' durations (each weighs
  // 1/kKernelTimeWeight): with the queue's length, how long its work will take.
  std::atomic<uint64_t> kernel_ns_mean{0};
  bool worker_has_batch = false; // the worker is running a batch; under `mutex`
  bool stopping = false;
  bool worker_sleeping = false; // notify work_ready only then
  // The completion count a thread asleep in synchronize() waits for, the
  // lowest of them (kNoSyncTarget: none). The worker wakes them only when
  // its completions reach it: a wake-up per kernel put the sleeping host
  // thread on a core once a kernel, preempting one of the kernels' OpenMP
  // threads, and their barriers waited for it (a 68x192 @ 192x768 matmul
  // took 190 us on the stream, 140 us after this, as on the CPU).
  std::atomic<uint64_t> sync_target{scaffold::driver::kNoSyncTarget};
  std::vector<uint64_t> sync_targets; // every sleeper's, under `mutex`
  std::thread worker;
  // The capture work enqueued on this stream is recorded into, begun here
  // (drvStreamBeginCapture) or joined (drvStreamWaitEvent); set and read
  // under `mutex`, and `capturing` mirrors it for the lock-free check of
  // every enqueue.
  std::shared_ptr<CaptureState> capture;
  std::atomic<bool> capturing{false};

  // Called with `mutex` held.
  void push(Work&& work) {
    queue.push_back(std::move(work));
    ++enqueued;
    enqueued_hint.store(enqueued, std::memory_order_release);
  }

  // Called with `mutex` held: there is work to run, by whichever thread runs it.
  bool has_unpaused_work() const {
    return !queue.empty() && !paused.load(std::memory_order_relaxed);
  }

  // Called with `mutex` held: the worker may take a batch.
  bool runnable() const {
    return has_unpaused_work() && !host_running.load(std::memory_order_relaxed);
  }

  // Called with `mutex` held: the pieces of a batch taken from the queue
  // that did not run, from `ran` on, go back to its front.
  void put_back_unrun(std::vector<Work>& pieces, size_t ran) {
    if (ran < pieces.size()) {
      queue.insert(
          queue.begin(), std::make_move_iterator(pieces.begin() + ran), std::make_move_iterator(pieces.end()));
    }
    pieces.clear();
  }

  // Runs one piece of work (on the worker, or on a host thread that runs the
  // queue) and reports its completion.
  void run_one(Work& work) {
    const bool kernel = work.kind == scaffold::driver::WorkKind::HostFunction;
    const uint64_t started = kernel ? scaffold::driver::activity_clock_ns() : 0;
    const uint64_t ran = work.run_traced(this, device);
    if (kernel) {
      note_kernel_time(scaffold::driver::activity_clock_ns() - started);
    }
    if (ran > 0 && work.kind != scaffold::driver::WorkKind::WaitEvent) {
      // Before the completion is reported: a synchronize that returns sees it.
      scaffold::driver::add_busy_time(device, ran);
    }
    work = Work(); // release what it held before reporting completion
    finished_one();
  }

  // Only the thread running the stream's work writes the mean.
  void note_kernel_time(uint64_t ns) {
    const auto mean = static_cast<int64_t>(kernel_ns_mean.load(std::memory_order_relaxed));
    const int64_t moved = mean + (static_cast<int64_t>(ns) - mean) / scaffold::driver::kKernelTimeWeight;
    kernel_ns_mean.store(static_cast<uint64_t>(moved), std::memory_order_relaxed);
  }

  void finished_one() {
    const uint64_t now_completed = completed.fetch_add(1, std::memory_order_seq_cst) + 1;
    // (seq_cst with synchronize()'s store of sync_target: either it sees
    // this completion before sleeping, or this sees its target.)
    if (now_completed >= sync_target.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex);
      work_done.notify_all();
    }
  }

  // Called with `mutex` held.
  void publish_sync_target() {
    const auto lowest = std::min_element(sync_targets.begin(), sync_targets.end());
    const uint64_t target = lowest == sync_targets.end() ? scaffold::driver::kNoSyncTarget : *lowest;
    sync_target.store(target, std::memory_order_seq_cst);
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (!runnable()) {
        if (stopping) {
          return;
        }
        // Poll a little before sleeping: the next launch is often close.
        const uint64_t seen = enqueued;
        lock.unlock();
        scaffold::driver::size_worker_team(true);
        const auto until = std::chrono::steady_clock::now() + scaffold::driver::kSpinBeforeSleep;
        while (enqueued_hint.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until) {
          scaffold::driver::cpu_relax();
        }
        lock.lock();
        if (!runnable() && !stopping) {
          worker_sleeping = true;
          work_ready.wait(lock, [&] { return stopping || runnable(); });
          worker_sleeping = false;
        }
        continue;
      }
      batch.swap(queue);
      worker_has_batch = true;
      lock.unlock();
      size_t done = 0;
      for (; done < batch.size(); ++done) {
        if (paused.load(std::memory_order_acquire) || host_running.load(std::memory_order_acquire)) {
          break; // the rest goes back to the front of the queue
        }
        if (batch[done].kind == scaffold::driver::WorkKind::HostFunction) {
          scaffold::driver::size_worker_team(
              false, enqueued_hint.load(std::memory_order_relaxed) - completed.load(std::memory_order_relaxed));
        }
        run_one(batch[done]);
      }
      lock.lock();
      put_back_unrun(batch, done);
      worker_has_batch = false;
      if (host_running.load(std::memory_order_relaxed)) {
        work_done.notify_all(); // the host thread waits for the hand-over
      }
    }
  }

  // Runs queued work on the calling host thread until `target` pieces have
  // completed; false when it does not (little is queued, another thread
  // runs it, the stream is paused), and the caller sleeps as before.
  bool run_on_host(uint64_t target) {
    const uint64_t queued = target - completed.load(std::memory_order_acquire);
    if (!scaffold::driver::host_runs_queue(queued, queued * kernel_ns_mean.load(std::memory_order_relaxed))) {
      return false;
    }
    std::unique_lock<std::mutex> lock(mutex);
    if (paused.load(std::memory_order_relaxed) || host_running.load(std::memory_order_relaxed)) {
      return false; // (most of the queue may be in the worker's batch: it hands that back)
    }
    host_running.store(true, std::memory_order_seq_cst);
    {
      // The worker finishes the piece it runs and puts the rest back.
      const scaffold::driver::HostWait host_waits;
      work_done.wait(lock, [&] { return !worker_has_batch; });
    }
    lock.unlock();
    {
      scaffold::driver::HostRunsWork host_runs;
      lock.lock();
      while (completed.load(std::memory_order_acquire) < target && has_unpaused_work()) {
        host_batch.swap(queue);
        lock.unlock();
        size_t done = 0;
        for (; done < host_batch.size() && completed.load(std::memory_order_relaxed) < target; ++done) {
          run_one(host_batch[done]);
          host_runs.after_each_piece();
        }
        lock.lock();
        put_back_unrun(host_batch, done);
      }
      host_running.store(false, std::memory_order_seq_cst);
      lock.unlock();
    }
    // Work enqueued after `target`, or by other threads meanwhile.
    work_ready.notify_one();
    return true;
  }

  void synchronize() {
    uint64_t target = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      target = enqueued;
    }
    if (completed.load(std::memory_order_acquire) >= target) {
      return;
    }
    const auto until = std::chrono::steady_clock::now() + scaffold::driver::kSpinBeforeSleep;
    while (std::chrono::steady_clock::now() < until) {
      if (completed.load(std::memory_order_acquire) >= target) {
        return;
      }
      scaffold::driver::cpu_relax();
    }
    if (run_on_host(target) && completed.load(std::memory_order_acquire) >= target) {
      return;
    }
    const scaffold::driver::HostWait host_waits;
    std::unique_lock<std::mutex> lock(mutex);
    sync_targets.push_back(target);
    publish_sync_target();
    work_done.wait(lock, [&] { return completed.load(std::memory_order_seq_cst) >= target; });
    sync_targets.erase(std::find(sync_targets.begin(), sync_targets.end(), target));
    publish_sync_target();
  }
};

struct drvEvent_st {
  std::shared_ptr<EventState> state;
};

namespace scaffold::driver {
namespace {

// Every stream of a device, for device-wide synchronisation.
struct DeviceStreams {
  std::mutex mutex;
  drvStream_t default_stream = nullptr;
  std::vector<drvStream_t> live;
};

DeviceStreams& device_streams(int device) {
  static auto* all = new std::array<DeviceStreams, kMaxDevices>(); // leaked on purpose
  return (*all)[device];
}

// Set in a child forked after a stream worker started: the workers did not
// survive the fork, so work enqueued there would never run.
std::atomic<bool> g_workers_lost{false};

void mark_workers_lost() {
  g_workers_lost.store(true, std::memory_order_relaxed);
}

drvError_t check_not_forked() {
  return g_workers_lost.load(std::memory_order_relaxed)
      ? fail(drvErrorForkedProcess, "streams cannot be used in a process forked after their first use")
      : drvSuccess;
}

drvStream_t start_stream(int device, int priority, bool is_default) {
  auto* stream = new drvStream_st();
  stream->device = device;
  stream->priority = priority;
  stream->is_default = is_default;
  if (!config().launch_blocking) {
    static std::once_flag fork_handler;
    std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, &mark_workers_lost); });
    stream->worker = std::thread([stream] {
      scaffold::driver::size_worker_team(true);
      stream->run();
    });
  }
  return stream;
}

drvError_t default_stream(int device, drvStream_t* out) {
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::lock_guard<std::mutex> lock(streams.mutex);
  if (streams.default_stream == nullptr) {
    // Never destroyed: its worker lives as long as the process.
    streams.default_stream = start_stream(device, 0, true);
    streams.live.push_back(streams.default_stream);
  }
  *out = streams.default_stream;
  return drvSuccess;
}

drvError_t resolve(drvStream_t* stream) {
  if (*stream != nullptr) {
    return drvSuccess;
  }
  return default_stream(current_device_unchecked(), stream);
}

drvError_t copy_now(void* dst, const void* src, size_t size, drvMemcpyKind kind, void** host_dst, const void** host_src) {
  *host_dst = kind == drvMemcpyDeviceToHost ? dst : translate(dst, size);
  *host_src = kind == drvMemcpyHostToDevice ? src : translate(src, size);
  if (*host_dst == nullptr || *host_src == nullptr) {
    return fail(drvErrorInvalidValue, "memcpy: a device-side pointer is not device memory of this driver (or the range runs past it)");
  }
  return drvSuccess;
}

} // namespace

// Marks work enqueued while tracing is on, with the enqueuing thread's
// correlation id.
inline void stamp(Work& work) {
  if (activity_enabled()) {
    work.traced = true;
    work.correlation_id = current_correlation_id();
  }
}

// A kernel launch: fn(user_data) as stream work.
inline Work host_function(void (*fn)(void*), void* user_data) {
  Work work;
  work.kind = WorkKind::HostFunction;
  work.fn = fn;
  work.dst = user_data;
  return work;
}

// Called with capture.mutex held: the capture ends without a graph, for the
// reason `message` (the first one is kept).
drvError_t invalidate_locked(CaptureState& capture, const std::string& message) {
  if (capture.invalidated.empty()) {
    capture.invalidated = message;
  }
  return fail(drvErrorStreamCaptureUnsupported, message + " (the stream is being captured into a graph: the capture is invalidated)");
}

drvError_t invalidate_capture(CaptureState& capture, const std::string& message) {
  std::lock_guard<std::mutex> lock(capture.mutex);
  return invalidate_locked(capture, message);
}

// Called with capture.mutex held.
drvError_t capture_invalidated_error(const CaptureState& capture) {
  return fail(drvErrorStreamCaptureInvalidated, "the stream's capture was invalidated by an earlier error: " + capture.invalidated);
}

// The capture `stream` takes part in (null when none).
std::shared_ptr<CaptureState> capture_of(drvStream_t stream) {
  if (!stream->capturing.load(std::memory_order_acquire)) {
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  return stream->capture;
}

// The live capture an event's last record is a point of (null when the
// record is not in a capture, or its capture ended).
std::shared_ptr<CaptureState> live_capture_of(EventState& event, CaptureClock* at = nullptr) {
  std::shared_ptr<CaptureState> capture;
  {
    std::lock_guard<std::mutex> lock(event.mutex);
    capture = event.captured_in;
    if (capture != nullptr && at != nullptr) {
      *at = event.captured_at;
    }
  }
  if (capture != nullptr) {
    std::lock_guard<std::mutex> lock(capture->mutex);
    if (capture->ended) {
      return nullptr;
    }
  }
  return capture;
}

// drvErrorStreamCaptureUnsupported, invalidating the capture, when the
// event's last record is in a live capture: the host would wait for, or
// time, a record that runs only when the graph is replayed.
drvError_t refuse_captured_event(EventState& event, const char* what) {
  std::shared_ptr<CaptureState> capture = live_capture_of(event);
  if (capture == nullptr) {
    return drvSuccess;
  }
  return invalidate_capture(
      *capture, std::string(what) + ": the event was recorded on a captured stream, where it completes only when the graph is replayed");
}

// `stream` waits on point `at` of `capture`: it joins the capture (what it
// enqueues from now on is captured, after the work `at` covers), or, in it
// already, its clock takes `at` in.
drvError_t join_capture(drvStream_t stream, const std::shared_ptr<CaptureState>& capture, const CaptureClock& at) {
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->capture != nullptr && stream->capture != capture) {
    return invalidate_capture(*stream->capture, "drvStreamWaitEvent: the event was recorded in another capture");
  }
  std::lock_guard<std::mutex> capture_lock(capture->mutex);
  if (capture->ended) {
    return fail(drvErrorInvalidValue, "drvStreamWaitEvent: the capture the event was recorded in ended during the call");
  }
  if (!capture->invalidated.empty()) {
    return capture_invalidated_error(*capture);
  }
  if (capture->device != stream->device) {
    return invalidate_locked(*capture, "drvStreamWaitEvent: a stream of another device cannot join the capture");
  }
  CaptureClock& clock = capture->clocks[stream];
  for (const auto& [member, count] : at) {
    uint64_t& known = clock[member];
    known = std::max(known, count);
  }
  if (stream->capture == nullptr) {
    stream->capture = capture;
    stream->capturing.store(true, std::memory_order_release);
  }
  return drvSuccess;
}

// True when `stream` is captured; then `work` was recorded (or refused:
// `*status`) instead of enqueued.
bool record_if_captured(drvStream_t stream, Work& work, drvError_t* status) {
  if (!stream->capturing.load(std::memory_order_acquire)) {
    return false;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->capture == nullptr) {
    return false; // the capture ended meanwhile
  }
  CaptureState& capture = *stream->capture;
  std::lock_guard<std::mutex> capture_lock(capture.mutex);
  if (!capture.invalidated.empty()) {
    *status = capture_invalidated_error(capture);
    return true;
  }
  switch (work.kind) {
    case WorkKind::HostFunction:
    case WorkKind::Set:
    case WorkKind::Fill:
      break;
    case WorkKind::Copy:
      if (work.copy_kind != drvMemcpyDeviceToDevice) {
        // The host memory may be gone, or hold other values, at a replay.
        *status = invalidate_locked(capture, "drvMemcpyAsync: a copy to or from host memory cannot be captured");
        return true;
      }
      break;
    case WorkKind::RecordEvent:
    case WorkKind::WaitEvent:
      // drvEventRecord and drvStreamWaitEvent make them points of the
      // capture; none is enqueued on a captured stream.
      *status = invalidate_locked(capture, "an event's work reached a captured stream");
      return true;
  }
  capture.nodes.push_back(std::move(work));
  capture.clocks[stream][stream] += 1;
  *status = drvSuccess;
  return true;
}

// Runs `work` on `stream` (null: current device's default) after the work
// enqueued before it; inline when launch blocking; recorded when the stream
// is captured.
drvError_t enqueue(drvStream_t stream, Work&& work) {
  static const bool blocking = config().launch_blocking;
  if (blocking) {
    // Nothing is ever queued in this mode, and no stream has a worker a
    // fork could lose: the stream's counters stay equal, so queries and
    // synchronisations see it idle without a lock taken per launch.
    if (drvError_t status = resolve(&stream); status != drvSuccess) {
      return status;
    }
    if (drvError_t captured = drvSuccess; record_if_captured(stream, work, &captured)) {
      return captured;
    }
    stamp(work);
    const uint64_t ran = work.run_traced(stream, stream->device);
    if (work.kind != WorkKind::WaitEvent) {
      add_busy_time(stream->device, ran);
    }
    return drvSuccess;
  }
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  if (drvError_t captured = drvSuccess; record_if_captured(stream, work, &captured)) {
    return captured;
  }
  stamp(work);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->push(std::move(work));
    wake = stream->worker_sleeping;
  }
  if (wake) {
    stream->work_ready.notify_one();
  }
  return drvSuccess;
}

// drvErrorStreamCaptureUnsupported, invalidating the capture, when `stream`
// is captured: `what` (a synchronisation) would wait for work that is only
// recorded.
drvError_t refuse_if_captured(drvStream_t stream, const char* what) {
  std::shared_ptr<CaptureState> capture = capture_of(stream);
  if (capture == nullptr) {
    return drvSuccess;
  }
  return invalidate_capture(*capture, std::string(what) + " synchronises with the host");
}

drvError_t refuse_if_device_captured(int device, const char* what) {
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::vector<drvStream_t> live;
  {
    std::lock_guard<std::mutex> lock(streams.mutex);
    live = streams.live;
  }
  drvError_t result = drvSuccess;
  for (drvStream_t stream : live) {
    if (drvError_t status = refuse_if_captured(stream, what); status != drvSuccess) {
      result = status;
    }
  }
  return result;
}

// Captured streams have no queued work of their own to wait for: what was
// enqueued before the capture began completes as usual.
drvError_t synchronize_device(int device) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  DeviceStreams& streams = device_streams(device);
  std::vector<drvStream_t> live;
  {
    std::lock_guard<std::mutex> lock(streams.mutex);
    live = streams.live;
  }
  for (drvStream_t stream : live) {
    stream->synchronize();
  }
  return drvSuccess;
}

} // namespace scaffold::driver

using namespace scaffold::driver;

extern "C" {

drvError_t drvMemcpyAsync(void* dst, const void* src, size_t size, drvMemcpyKind kind, drvStream_t stream) {
  if (size == 0) {
    return drvSuccess;
  }
  void* host_dst = nullptr;
  const void* host_src = nullptr;
  if (drvError_t status = copy_now(dst, src, size, kind, &host_dst, &host_src); status != drvSuccess) {
    return status;
  }
  Work work;
  work.kind = WorkKind::Copy;
  work.dst = host_dst;
  work.src = host_src;
  work.size = size;
  work.copy_kind = kind;
  return enqueue(stream, std::move(work));
}

drvError_t drvMemcpy(void* dst, const void* src, size_t size, drvMemcpyKind kind) {
  if (drvError_t status = drvMemcpyAsync(dst, src, size, kind, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvMemsetAsync(void* device_ptr, int value, size_t size, drvStream_t stream) {
  if (size == 0) {
    return drvSuccess;
  }
  void* host = translate(device_ptr, size);
  if (host == nullptr) {
    return fail(drvErrorInvalidValue, "memset: not device memory of this driver (or the range runs past it)");
  }
  Work work;
  work.kind = WorkKind::Set;
  work.dst = host;
  work.value = value;
  work.size = size;
  return enqueue(stream, std::move(work));
}

drvError_t drvMemFillAsync(void* device_ptr, const void* pattern, size_t pattern_size, size_t size, drvStream_t stream) {
  if (pattern == nullptr || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8 && pattern_size != 16)) {
    return fail(drvErrorInvalidValue, "drvMemFillAsync: the pattern must be 1, 2, 4, 8 or 16 bytes");
  }
  if (size % pattern_size != 0 || reinterpret_cast<uintptr_t>(device_ptr) % pattern_size != 0) {
    return fail(drvErrorInvalidValue, "drvMemFillAsync: the address and size must be multiples of the pattern's size");
  }
  if (size == 0) {
    return drvSuccess;
  }
  void* host = translate(device_ptr, size);
  if (host == nullptr) {
    return fail(drvErrorInvalidValue, "drvMemFillAsync: not device memory of this driver (or the range runs past it)");
  }
  Work work;
  work.kind = WorkKind::Fill;
  work.dst = host;
  work.size = size;
  work.pattern_size = static_cast<uint8_t>(pattern_size);
  std::memcpy(work.pattern.data(), pattern, pattern_size);
  return enqueue(stream, std::move(work));
}

drvError_t drvMemset(void* device_ptr, int value, size_t size) {
  if (drvError_t status = drvMemsetAsync(device_ptr, value, size, nullptr); status != drvSuccess) {
    return status;
  }
  return drvStreamSynchronize(nullptr);
}

drvError_t drvLaunchHostFunc(drvStream_t stream, void (*fn)(void*), void* user_data) {
  if (fn == nullptr) {
    return fail(drvErrorInvalidValue, "drvLaunchHostFunc: null function");
  }
  return enqueue(stream, host_function(fn, user_data));
}

drvError_t drvDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) {
    *least = 0;
  }
  if (greatest != nullptr) {
    *greatest = -1;
  }
  return drvSuccess;
}

drvError_t drvStreamCreate(drvStream_t* stream, int priority) {
  if (stream == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamCreate: null output");
  }
  const int device = current_device_unchecked();
  if (drvError_t status = check_device(device); status != drvSuccess) {
    return status;
  }
  // Clamp into [greatest, least] = [-1, 0], as CUDA does.
  priority = priority < -1 ? -1 : (priority > 0 ? 0 : priority);
  DeviceStreams& streams = device_streams(device);
  drvStream_t created = start_stream(device, priority, false);
  std::lock_guard<std::mutex> lock(streams.mutex);
  streams.live.push_back(created);
  *stream = created;
  return drvSuccess;
}

drvError_t drvStreamDestroy(drvStream_t stream) {
  if (stream == nullptr || stream->is_default) {
    return fail(drvErrorInvalidHandle, "drvStreamDestroy: the default stream cannot be destroyed");
  }
  if (stream->capturing.load(std::memory_order_acquire)) {
    return fail(drvErrorInvalidValue, "drvStreamDestroy: the stream is being captured; end the capture first");
  }
  stream->synchronize();
  {
    DeviceStreams& streams = device_streams(stream->device);
    std::lock_guard<std::mutex> lock(streams.mutex);
    std::erase(streams.live, stream);
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->stopping = true;
    stream->paused.store(false, std::memory_order_release);
  }
  stream->work_ready.notify_one();
  if (stream->worker.joinable()) {
    stream->worker.join();
  }
  delete stream;
  return drvSuccess;
}

drvError_t drvStreamGetDefault(drvStream_t* stream, int device) {
  if (stream == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetDefault: null output");
  }
  return default_stream(device, stream);
}

drvError_t drvStreamQuery(drvStream_t stream) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = refuse_if_captured(stream, "drvStreamQuery"); status != drvSuccess) {
    return status;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  return stream->completed.load(std::memory_order_acquire) == stream->enqueued ? drvSuccess : drvErrorNotReady;
}

drvError_t drvStreamSynchronize(drvStream_t stream) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = refuse_if_captured(stream, "drvStreamSynchronize"); status != drvSuccess) {
    return status;
  }
  stream->synchronize();
  return drvSuccess;
}

drvError_t drvStreamGetPriority(drvStream_t stream, int* priority) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  *priority = stream->priority;
  return drvSuccess;
}

drvError_t drvStreamGetDevice(drvStream_t stream, int* device) {
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  *device = stream->device;
  return drvSuccess;
}

drvError_t drvStreamGetNativeHandle(drvStream_t stream, void** native) {
  return fail(drvErrorNotSupported, "the simulated device has no native handles: its kernels are host functions (drvLaunchHostFunc)");
}

drvError_t drvStreamWaitEvent(drvStream_t stream, drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvStreamWaitEvent: null event");
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  std::shared_ptr<EventState> state = event->state;
  CaptureClock recorded_at;
  if (std::shared_ptr<CaptureState> recorded_in = live_capture_of(*state, &recorded_at); recorded_in != nullptr) {
    return join_capture(stream, recorded_in, recorded_at);
  }
  uint64_t target = 0;
  bool pending = false;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    target = state->recorded;
    pending = state->completed < target;
  }
  // Outside the event's lock: a capture's mutex comes before an event's.
  if (std::shared_ptr<CaptureState> capture = capture_of(stream); capture != nullptr && target > 0) {
    // As CUDA's cudaErrorStreamCaptureIsolation: the replays could not
    // wait for work that is not part of the graph.
    return invalidate_capture(
        *capture,
        "drvStreamWaitEvent: the event was recorded outside the capture; a captured stream waits only on events "
        "recorded in its capture");
  }
  if (!pending) {
    return drvSuccess; // nothing pending: no work to add
  }
  Work work;
  work.kind = WorkKind::WaitEvent;
  work.event = std::move(state);
  work.generation = target;
  return enqueue(stream, std::move(work));
}

drvError_t drvEventCreate(drvEvent_t* event, unsigned flags) {
  if (event == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventCreate: null output");
  }
  auto* created = new drvEvent_st{std::make_shared<EventState>()};
  created->state->flags = flags;
  *event = created;
  return drvSuccess;
}

drvError_t drvEventDestroy(drvEvent_t event) {
  delete event; // work still queued keeps the state alive
  return drvSuccess;
}

drvError_t drvEventRecord(drvEvent_t event, drvStream_t stream) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventRecord: null event");
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  std::shared_ptr<EventState> state = event->state;
  if (std::shared_ptr<CaptureState> capture = capture_of(stream); capture != nullptr) {
    // A point of the capture: what the stream captured so far.
    CaptureClock at;
    {
      std::lock_guard<std::mutex> lock(capture->mutex);
      if (!capture->invalidated.empty()) {
        return capture_invalidated_error(*capture);
      }
      at = capture->clocks[stream];
    }
    std::lock_guard<std::mutex> lock(state->mutex);
    state->captured_in = std::move(capture);
    state->captured_at = std::move(at);
    return drvSuccess;
  }
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->captured_in = nullptr;
    generation = ++state->recorded;
  }
  Work work;
  work.kind = WorkKind::RecordEvent;
  work.event = state;
  work.generation = generation;
  const drvError_t status = enqueue(stream, std::move(work));
  if (status != drvSuccess) {
    state->complete(generation); // nothing will run it: don't leave waiters hanging
  }
  return status;
}

drvError_t drvEventQuery(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventQuery: null event");
  }
  if (drvError_t status = refuse_captured_event(*event->state, "drvEventQuery"); status != drvSuccess) {
    return status;
  }
  std::lock_guard<std::mutex> lock(event->state->mutex);
  return event->state->completed >= event->state->recorded ? drvSuccess : drvErrorNotReady;
}

drvError_t drvEventSynchronize(drvEvent_t event) {
  if (event == nullptr) {
    return fail(drvErrorInvalidHandle, "drvEventSynchronize: null event");
  }
  if (drvError_t status = refuse_captured_event(*event->state, "drvEventSynchronize"); status != drvSuccess) {
    return status;
  }
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(event->state->mutex);
    target = event->state->recorded;
    if (event->state->completed >= target) {
      return drvSuccess;
    }
  }
  const scaffold::driver::HostWait host_waits;
  event->state->wait_for(target);
  return drvSuccess;
}

drvError_t drvEventElapsedTime(float* ms, drvEvent_t start, drvEvent_t end) {
  if (ms == nullptr || start == nullptr || end == nullptr) {
    return fail(drvErrorInvalidValue, "drvEventElapsedTime: null argument");
  }
  std::chrono::steady_clock::time_point times[2];
  drvEvent_t events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    EventState& state = *events[i]->state;
    if (drvError_t status = refuse_captured_event(state, "drvEventElapsedTime"); status != drvSuccess) {
      return status;
    }
    std::lock_guard<std::mutex> lock(state.mutex);
    if ((state.flags & DRV_EVENT_DISABLE_TIMING) != 0) {
      return fail(drvErrorInvalidHandle, "elapsed time needs events created with timing enabled");
    }
    if (state.recorded == 0) {
      return fail(drvErrorInvalidHandle, "elapsed time needs both events recorded first");
    }
    if (state.completed < state.recorded) {
      return fail(drvErrorNotReady, "an event's work has not completed yet");
    }
    times[i] = state.completed_at;
  }
  *ms = std::chrono::duration<float, std::milli>(times[1] - times[0]).count();
  return drvSuccess;
}

drvError_t drvStreamBeginCapture(drvStream_t stream) {
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->capture != nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamBeginCapture: the stream is already being captured");
  }
  stream->capture = std::make_shared<CaptureState>();
  stream->capture->device = stream->device;
  stream->capture->origin = stream;
  stream->capture->clocks[stream] = {};
  stream->capturing.store(true, std::memory_order_release);
  return drvSuccess;
}

drvError_t drvStreamEndCapture(drvStream_t stream, drvGraph_t* graph) {
  if (graph == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamEndCapture: null output");
  }
  *graph = nullptr;
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  std::shared_ptr<CaptureState> capture;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (stream->capture == nullptr) {
      return fail(drvErrorInvalidValue, "drvStreamEndCapture: the stream is not being captured");
    }
    if (stream->capture->origin != stream) {
      return fail(drvErrorInvalidValue, "drvStreamEndCapture: the stream joined a capture begun on another stream; end it there");
    }
    capture = std::move(stream->capture);
    stream->capturing.store(false, std::memory_order_release);
  }
  std::vector<drvStream_t> joined;
  size_t unjoined = 0;
  {
    std::lock_guard<std::mutex> lock(capture->mutex);
    capture->ended = true;
    const CaptureClock& origin = capture->clocks[stream];
    for (const auto& [member, clock] : capture->clocks) {
      if (member == stream) {
        continue;
      }
      joined.push_back(member);
      const auto own = clock.find(member);
      const auto covered = origin.find(member);
      if (own != clock.end() && (covered == origin.end() || covered->second < own->second)) {
        ++unjoined;
      }
    }
  }
  for (drvStream_t member : joined) {
    std::lock_guard<std::mutex> lock(member->mutex);
    if (member->capture == capture) {
      member->capture = nullptr;
      member->capturing.store(false, std::memory_order_release);
    }
  }
  if (!capture->invalidated.empty()) {
    return fail(drvErrorStreamCaptureInvalidated, "the capture was invalidated: " + capture->invalidated);
  }
  if (unjoined > 0) {
    return fail(
        drvErrorStreamCaptureUnjoined,
        std::to_string(unjoined) + " of the " + std::to_string(joined.size()) +
            " streams that joined the capture (by waiting on an event recorded in it) captured work the capturing "
            "stream did not wait for: record an event on each after its last work and make the capturing stream "
            "wait on it");
  }
  *graph = new drvGraph_st{capture->device, std::move(capture->nodes)};
  return drvSuccess;
}

drvError_t drvStreamGetCaptureStatus(drvStream_t stream, drvStreamCaptureStatus* status) {
  if (status == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetCaptureStatus: null output");
  }
  if (drvError_t resolved = resolve(&stream); resolved != drvSuccess) {
    return resolved;
  }
  std::shared_ptr<CaptureState> capture = capture_of(stream);
  if (capture == nullptr) {
    *status = drvStreamCaptureStatusNone;
    return drvSuccess;
  }
  std::lock_guard<std::mutex> lock(capture->mutex);
  *status = capture->ended ? drvStreamCaptureStatusNone
      : capture->invalidated.empty() ? drvStreamCaptureStatusActive
                                     : drvStreamCaptureStatusInvalidated;
  return drvSuccess;
}

drvError_t drvGraphGetNodeCount(drvGraph_t graph, size_t* count) {
  if (graph == nullptr || count == nullptr) {
    return fail(drvErrorInvalidValue, "drvGraphGetNodeCount: null argument");
  }
  *count = graph->nodes.size();
  return drvSuccess;
}

drvError_t drvGraphDebugDotPrint(drvGraph_t graph, const char* path) {
  if (graph == nullptr || path == nullptr) {
    return fail(drvErrorInvalidValue, "drvGraphDebugDotPrint: null argument");
  }
  std::FILE* file = std::fopen(path, "w");
  if (file == nullptr) {
    return fail_os("fopen (drvGraphDebugDotPrint)");
  }
  std::fprintf(file, "digraph device_graph {\n  label=\"device %d: %zu nodes\";\n", graph->device, graph->nodes.size());
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const Work& node = graph->nodes[i];
    const char* kind = node.kind == WorkKind::HostFunction ? "kernel" : node.kind == WorkKind::Copy ? "memcpy DtoD" : "memset";
    std::fprintf(file, "  n%zu [label=\"%zu: %s", i, i, kind);
    if (node.kind != WorkKind::HostFunction) {
      std::fprintf(file, " %zu bytes", node.size);
    }
    std::fprintf(file, "\"];\n");
    if (i > 0) {
      std::fprintf(file, "  n%zu -> n%zu;\n", i - 1, i);
    }
  }
  std::fprintf(file, "}\n");
  return std::fclose(file) == 0 ? drvSuccess : fail_os("fclose (drvGraphDebugDotPrint)");
}

drvError_t drvGraphDestroy(drvGraph_t graph) {
  delete graph;
  return drvSuccess;
}

drvError_t drvGraphInstantiate(drvGraphExec_t* exec, drvGraph_t graph) {
  if (exec == nullptr || graph == nullptr) {
    return fail(drvErrorInvalidValue, "drvGraphInstantiate: null argument");
  }
  *exec = new drvGraphExec_st{graph->device, graph->nodes};
  return drvSuccess;
}

drvError_t drvGraphLaunch(drvGraphExec_t exec, drvStream_t stream) {
  if (exec == nullptr) {
    return fail(drvErrorInvalidHandle, "drvGraphLaunch: null graph");
  }
  if (drvError_t status = check_not_forked(); status != drvSuccess) {
    return status;
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  if (stream->device != exec->device) {
    return fail(drvErrorInvalidValue, "drvGraphLaunch: the graph was captured on device " + std::to_string(exec->device) +
        ", the stream is on device " + std::to_string(stream->device));
  }
  if (std::shared_ptr<CaptureState> capture = capture_of(stream); capture != nullptr) {
    return invalidate_capture(*capture, "drvGraphLaunch: launching a graph");
  }
  if (config().launch_blocking) {
    for (Work node : exec->nodes) {
      stamp(node);
      add_busy_time(stream->device, node.run_traced(stream, stream->device));
    }
    return drvSuccess;
  }
  // All of the graph's work in one locked step: a replay costs the host one
  // call, however many kernels the graph holds.
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    for (const Work& node : exec->nodes) {
      Work copy = node;
      stamp(copy);
      stream->push(std::move(copy));
    }
    wake = stream->worker_sleeping;
  }
  if (wake) {
    stream->work_ready.notify_one();
  }
  return drvSuccess;
}

drvError_t drvGraphExecDestroy(drvGraphExec_t exec) {
  delete exec; // queued replays hold copies of its work
  return drvSuccess;
}

drvError_t drvTestingPauseStream(drvStream_t stream, int paused) {
  if (config().launch_blocking) {
    return fail(drvErrorNotSupported, "streams cannot be paused with SCAFFOLD_LAUNCH_BLOCKING=1");
  }
  if (drvError_t status = resolve(&stream); status != drvSuccess) {
    return status;
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->paused.store(paused != 0, std::memory_order_release);
  }
  stream->work_ready.notify_one();
  return drvSuccess;
}

} // extern "C"
