#include "stream_gate.h"

#include "status.h"
#include "stream.h"

namespace scaffold::runtime {

StreamGate::StreamGate() : state_(std::make_shared<State>()) {}

StreamGate::~StreamGate() {
  open();
}

void StreamGate::enqueue_wait(const c10::Stream& stream) {
  check_stream(stream);
  // The stream's worker may run the wait after this gate is destroyed: it
  // holds its own reference to the state, released when the wait ends.
  auto* held = new std::shared_ptr<State>(state_);
  const drvError_t status = drvLaunchHostFunc(driver_stream(stream), &StreamGate::wait_until_open, held);
  if (status != drvSuccess) {
    delete held;
    SCAFFOLD_DRIVER_CHECK(status);
  }
}

void StreamGate::wait_until_open(void* held_state) {
  const std::unique_ptr<std::shared_ptr<State>> held(static_cast<std::shared_ptr<State>*>(held_state));
  State& state = **held;
  std::unique_lock lock(state.mutex);
  state.opened.wait(lock, [&] { return state.open; });
}

void StreamGate::open() {
  {
    const std::lock_guard lock(state_->mutex);
    state_->open = true;
  }
  state_->opened.notify_all();
}

bool StreamGate::is_open() const {
  const std::lock_guard lock(state_->mutex);
  return state_->open;
}

} // namespace scaffold::runtime
