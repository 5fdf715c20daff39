// Kernels of aten::gather for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gather.h"

#include <c10/util/Exception.h>

#include <ATen/ops/gather_cpu_dispatch.h>
#include <ATen/ops/gather_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & gather_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, bool sparse_grad, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  // No index dtype check here: the CPU kernel makes its own, and the OpInfo conformance sweep
  // found foo refusing index dtypes that the CPU accepts. With every tensor on out's device,
  // meta() checks dtypes and shapes at the call and impl() is launched; an index out of range is
  // then reported at the next synchronisation, as CUDA's device-side assert is.
  if (self.device() == out.device() && index.device() == out.device()) {
    rt::StructuredOut<at::native::structured_gather_out> op(out, {self, index});
    if (op.native()) {
      op.meta(op.input(0), dim, op.input(1), sparse_grad);
      if (op.fits()) {
        op.launch("gather.out", [dim, sparse_grad](auto& op) {
          op.impl(op.input(0), dim, op.input(1), sparse_grad, op.output());
        });
        return out;
      }
    }
  }
  const rt::KernelCall call("gather.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::gather_out(o.host(), call.input(self, "self"), dim, call.input(index, "index"), sparse_grad);
  return o.commit();
}

}  // namespace foo
