// torch.ops.scaffold_runtime.stream_wait_work(work, device, stream_id, what):
// makes a device stream wait for a c10d Work without blocking the host, as
// NCCL's Work.wait() makes the current CUDA stream wait for the collective.
//
// The wait runs on the stream itself: a host function enqueued there
// (drvLaunchHostFunc) calls work->wait(), so work enqueued on the stream
// afterwards starts once the collective is done, and the caller returns at
// once. It is all C++: neither the enqueue nor the completion needs the
// Python GIL, which the thread that waits for the stream may be holding
// (DTensor runs local ops with it held).
//
// A collective that fails once its wait() has returned cannot raise to the
// caller any more, and the streams behind it would go on with data it never
// delivered: the process is aborted with the error, as NCCL's asynchronous
// error handling does by default (TORCH_NCCL_ASYNC_ERROR_HANDLING=3).
//
// The distributed backend (python/<package>/distributed.py) uses it for the
// works of its engine (Gloo). A port keeps it as it is: it needs only
// drvLaunchHostFunc.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/library.h>

#include "device.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

struct PendingWork {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
};

void wait_for_work(void* pending_work) {
  const std::unique_ptr<PendingWork> pending(static_cast<PendingWork*>(pending_work));
  try {
    pending->work->wait();
  } catch (const std::exception& error) {
    std::fprintf(
        stderr,
        "%s failed: %s\nThe failure came after %s's Work.wait() returned: aborting the process, "
        "as NCCL's asynchronous error handling does; the device streams that waited for it "
        "would go on with data it never delivered.\n",
        pending->what.c_str(),
        error.what(),
        pending->what.c_str());
    std::fflush(stderr);
    std::abort();
  }
}

void stream_wait_work(
    const c10::intrusive_ptr<c10d::Work>& work,
    int64_t device,
    int64_t stream_id,
    const std::string& what) {
  const auto index = static_cast<c10::DeviceIndex>(device);
  check_device_index(index);
  const c10::Stream stream(c10::Stream::UNSAFE, make_device(index), static_cast<c10::StreamId>(stream_id));
  check_stream(stream);
  auto pending = std::make_unique<PendingWork>(PendingWork{work, what});
  SCAFFOLD_DRIVER_CHECK(drvLaunchHostFunc(driver_stream(stream), &wait_for_work, pending.get()));
  pending.release(); // wait_for_work owns it now
}

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  m.def(
      "stream_wait_work(__torch__.torch.classes.c10d.Work work, int device, int stream_id, str what) -> ()",
      TORCH_FN(scaffold::runtime::stream_wait_work));
}
