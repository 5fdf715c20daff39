// Kernels of aten::index_select for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index_select.h"

#include <c10/util/Exception.h>

#include <ATen/ops/index_select_cpu_dispatch.h>
#include <ATen/WrapDimUtils.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & index_select_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, "index_select.out: expected an int64 or int32 'index' tensor, got ", index.scalar_type());
  const rt::KernelCall call("index_select.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::index_select_out(o.host(), call.input(self, "self"), dim, call.input(index, "index"));
  return o.commit();
}

at::Tensor index_select(const at::Tensor & self, int64_t dim, const at::Tensor & index) {
  namespace rt = scaffold::runtime;
  // ATen's index_select has no structured default kernel: the CPU one
  // allocates an empty result that index_select.out resizes to self's shape
  // with `dim` replaced by the number of indices (contiguous). Allocating it
  // at that shape directly saves the out kernel a resize and a copy.
  // The CPU kernel's checks that need no data, here on the caller as CUDA's
  // host code makes them, with the CPU's messages (launched work would report
  // them at the next synchronisation).
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(self.dim() > 0 || index.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", index.numel(), " value(s)");
  const int64_t wrapped = at::maybe_wrap_dim(dim, self.dim());
  at::DimVector size(self.sizes());
  if (self.dim() > 0) {
    size[wrapped] = index.numel();
  }
  rt::FunctionalOperands op({self, index});
  if (op.native()) {
    op.make_output(size, {}, self.options());
    // Launched: an index out of range is reported at the next
    // synchronisation, as a CUDA device-side assert is.
    return op.launch("index_select", [dim](rt::FunctionalOperands& op) {
      at::cpu::index_select_out(op.output(), op.input(0), dim, op.input(1));
    });
  }
  const rt::KernelCall call("index_select", self, "self");
  at::Tensor result = rt::allocate(size, self.scalar_type(), call.device());
  rt::OutputView o = call.output(result, "result");
  at::cpu::index_select_out(o.host(), call.input(self, "self"), dim, call.input(index, "index"));
  return o.commit();
}

}  // namespace foo
