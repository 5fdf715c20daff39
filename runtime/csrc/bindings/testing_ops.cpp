// Operators for the runtime's own tests (torch.ops.scaffold_runtime.*):
// they reach internals that no public op shows on its own.
//
// _kept_kernel_view_for_testing(self): the host view of `self` that an
// out= or in-place kernel works on (FunctionalOperands), kept past the op
// as a CPU kernel that stashed its operand somewhere would keep it. With
// launch blocking such views only borrow the device storage while the op
// runs (host_view_cache.h, StorageRef); the tests free `self` and check
// that the kept view still owns its memory.
//
// _kernel_threads_for_testing(out, limit): launched work that limits itself
// to `limit` compute threads (limit_launched_threads; 0: no limit), then
// writes into out[0] how many threads its parallel loops get (ATen's
// at::get_num_threads(): the OpenMP count its kernels and oneDNN's take),
// and a second piece of work launched after it writes its own into out[1].
//
// _kernel_thread_for_testing(out, row, limit, micros): launched work that
// first waits `micros` microseconds (the stream's kernel time: a
// synchronisation right after a few of them finds a long queue), limits
// itself to `limit` compute threads (0: no limit), and writes into
// out[row], through ATen's fill_ (a dispatcher call, as a kernel's own CPU
// ops are), the native id of the thread it runs on, the threads its parallel
// loops get, and how many of these ran before it.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "functional_operands.h"
#include "launch.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

at::Tensor kept_kernel_view_for_testing(const at::Tensor& self) {
  at::Tensor kept;
  {
    FunctionalOperands operands(self, {});
    TORCH_CHECK(operands.native(), "_kept_kernel_view_for_testing: expected a strided device tensor");
    kept = operands.output();
  } // the op ends: its views are recycled, except this one
  return kept;
}

void kernel_threads_for_testing(const at::Tensor& out, int64_t limit) {
  TORCH_CHECK(
      out.device().is_privateuseone() && out.scalar_type() == at::kLong && out.dim() == 1 && out.numel() == 2,
      "_kernel_threads_for_testing: expected a 1-dim int64 device tensor of 2 elements");
  launch(out.device().index(), "_kernel_threads_for_testing", [view = launch_host_view(out), limit]() {
    if (limit > 0) {
      limit_launched_threads(static_cast<int>(limit));
    }
    view.mutable_data_ptr<int64_t>()[0] = at::get_num_threads();
  });
  launch(out.device().index(), "_kernel_threads_for_testing", [view = launch_host_view(out)]() {
    view.mutable_data_ptr<int64_t>()[1] = at::get_num_threads();
  });
}

void kernel_thread_for_testing(const at::Tensor& out, int64_t row, int64_t limit, int64_t micros) {
  TORCH_CHECK(
      out.device().is_privateuseone() && out.scalar_type() == at::kLong && out.dim() == 2 && out.size(1) == 3 &&
          row >= 0 && row < out.size(0),
      "_kernel_thread_for_testing: expected a 2-dim int64 device tensor of 3 columns and a row of it");
  launch(out.device().index(), "_kernel_thread_for_testing", [view = launch_host_view(out), row, limit, micros]() {
    static std::atomic<int64_t> ran_before{0};
    if (micros > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(micros));
    }
    if (limit > 0) {
      limit_launched_threads(static_cast<int>(limit));
    }
    const at::Tensor written = view.select(0, row);
    written.select(0, 0).fill_(static_cast<int64_t>(syscall(SYS_gettid)));
    written.select(0, 1).fill_(static_cast<int64_t>(at::get_num_threads()));
    written.select(0, 2).fill_(ran_before.fetch_add(1));
  });
}

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  m.def("_kept_kernel_view_for_testing(Tensor(a) self) -> Tensor(a)");
  m.def("_kernel_threads_for_testing(Tensor(a!) out, int limit) -> ()");
  m.def("_kernel_thread_for_testing(Tensor(a!) out, int row, int limit, int micros) -> ()");
}

TORCH_LIBRARY_IMPL(scaffold_runtime, PrivateUse1, m) {
  m.impl("_kept_kernel_view_for_testing", TORCH_FN(scaffold::runtime::kept_kernel_view_for_testing));
  m.impl("_kernel_threads_for_testing", TORCH_FN(scaffold::runtime::kernel_threads_for_testing));
  m.impl("_kernel_thread_for_testing", TORCH_FN(scaffold::runtime::kernel_thread_for_testing));
}
