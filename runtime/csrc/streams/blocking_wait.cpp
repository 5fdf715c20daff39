#include "blocking_wait.h"

#include <atomic>

namespace scaffold::runtime {
namespace {

std::atomic<void* (*)()> g_release{nullptr};
std::atomic<void (*)(void*)> g_restore{nullptr};

} // namespace

void set_blocking_wait_hooks(BlockingWaitHooks hooks) {
  g_restore.store(hooks.restore, std::memory_order_relaxed);
  g_release.store(hooks.release, std::memory_order_release);
}

BlockingWait::BlockingWait() {
  if (auto release = g_release.load(std::memory_order_acquire)) {
    state_ = release();
  }
}

BlockingWait::~BlockingWait() {
  if (state_ != nullptr) {
    g_restore.load(std::memory_order_relaxed)(state_);
  }
}

} // namespace scaffold::runtime
