// Inline launches: while a thread has them on, the work it launches
// (launch.h) runs on that thread at the launch, still in stream order
// (drvLaunchHostFuncInline), whenever the driver can; otherwise it is
// enqueued as usual. What the work throws is thrown by launch() itself, as
// with SCAFFOLD_LAUNCH_BLOCKING=1.
//
// A compiled graph turns them on for its whole body (the Inductor wrapper in
// python/<package>/_inductor.py): the graph's own C++ kernels run on the
// calling thread and wait for the stream before each one, so handing each of
// the graph's ATen kernels to the stream's worker would only add a round
// trip between threads.
#pragma once

namespace scaffold::runtime {

// Turns inline launches on or off for the calling thread; returns the
// previous setting.
bool set_launches_inline(bool enabled) noexcept;

} // namespace scaffold::runtime
