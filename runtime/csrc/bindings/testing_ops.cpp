// Operators for the runtime's own tests (torch.ops.scaffold_runtime.*):
// they reach internals that no public op shows on its own.
//
// _kept_kernel_view_for_testing(self): the host view of `self` that an
// out= or in-place kernel works on (FunctionalOperands), kept past the op
// as a CPU kernel that stashed its operand somewhere would keep it. With
// launch blocking such views only borrow the device storage while the op
// runs (host_view_cache.h, StorageRef); the tests free `self` and check
// that the kept view still owns its memory.
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "functional_operands.h"

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

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  m.def("_kept_kernel_view_for_testing(Tensor(a) self) -> Tensor(a)");
}

TORCH_LIBRARY_IMPL(scaffold_runtime, PrivateUse1, m) {
  m.impl("_kept_kernel_view_for_testing", TORCH_FN(scaffold::runtime::kept_kernel_view_for_testing));
}
