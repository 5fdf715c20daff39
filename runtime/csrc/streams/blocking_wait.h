// Host threads that block until device work has run hand back the GIL.
//
// A stream's worker destroys what finished work captured. Dropping the last
// reference to a tensor or storage whose Python object it then owns takes
// the GIL (c10's PyInterpreter decref). An op called through Python's
// dispatcher runs with the GIL held -- Inductor's constant folding calls
// .item() that way -- so a host thread that kept the GIL while it waited for
// the stream would deadlock with the worker. Every wait in stream.cpp runs in
// a BlockingWait scope, which releases the GIL while it blocks, as
// torch.cuda.synchronize() does.
//
// The Python module installs the release (bindings/python_module.cpp), so
// the runtime itself stays free of Python; without it a scope does nothing.
// A scope must not hold a lock that a thread taking the GIL may wait on.
#pragma once

namespace scaffold::runtime {

struct BlockingWaitHooks {
  // Releases the GIL if the calling thread holds it; returns what restore
  // needs, or nullptr when it released nothing.
  void* (*release)() = nullptr;
  void (*restore)(void* state) = nullptr;
};

// Installed once, when the Python module is imported.
void set_blocking_wait_hooks(BlockingWaitHooks hooks);

class BlockingWait {
 public:
  BlockingWait();
  ~BlockingWait();
  BlockingWait(const BlockingWait&) = delete;
  BlockingWait& operator=(const BlockingWait&) = delete;

 private:
  void* state_ = nullptr;
};

} // namespace scaffold::runtime
