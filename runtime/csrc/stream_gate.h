// StreamGate: makes device streams wait for something that happens on the
// host, without blocking the thread that asks.
//
// An event makes a stream wait for earlier work of another stream; a gate
// makes it wait until host code calls open(). The process group uses it for
// collectives run by a host-side engine (Gloo): Work.wait() gates the
// current stream, as NCCL's wait makes the current stream wait for the
// collective's stream, and the engine's completion opens the gate. Work
// enqueued on a gated stream after enqueue_wait() runs once the gate opens;
// the host returns at once.
//
// A hardware port keeps this as it is: it needs only drvLaunchHostFunc.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

#include <c10/core/Stream.h>

namespace scaffold::runtime {

class StreamGate {
 public:
  StreamGate();
  // Opens the gate: a gate is never left closed, or its streams would wait
  // forever.
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Work enqueued on `stream` after this call waits until open(). Any number
  // of streams may wait on one gate. In launch-blocking mode this blocks the
  // caller until open(), as every stream operation does in that mode.
  void enqueue_wait(const c10::Stream& stream);
  // Lets every waiting stream go on. Idempotent.
  void open();
  bool is_open() const;

 private:
  struct State {
    mutable std::mutex mutex;
    std::condition_variable opened;
    bool open = false;
  };
  static void wait_until_open(void* held_state);

  std::shared_ptr<State> state_;
};

} // namespace scaffold::runtime
