// Kernels of aten::cumsum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cumsum.h"

#include <c10/util/Exception.h>

#include <ATen/ops/cumsum_cpu_dispatch.h>
#include <ATen/ops/cumsum_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & cumsum_out(const at::Tensor & self, int64_t dim, ::std::optional<at::ScalarType> dtype, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  // cumsum's functional and in-place forms reach this kernel with out already sized by meta():
  // launched, with meta()'s checks (dim, dtype) at the call. An out to resize runs inline.
  rt::StructuredOut<at::native::structured_cumsum_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0), dim, dtype);
    if (op.fits()) {
      op.launch("cumsum.out", [dim, dtype](auto& op) { op.impl(op.input(0), dim, dtype, op.output()); });
      return out;
    }
  }
  const rt::KernelCall call("cumsum.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::cumsum_out(o.host(), call.input(self, "self"), dim, dtype);
  return o.commit();
}

}  // namespace foo
