// Kernels of aten::bmm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/bmm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/bmm_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & bmm_out(const at::Tensor & self, const at::Tensor & mat2, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(self.dim() == 3 && mat2.dim() == 3, "bmm.out: expected two 3-D tensors, got ", self.dim(), "-D and ", mat2.dim(), "-D");
  rt::StructuredOut<at::native::structured_bmm_out_cpu> op(out, {self, mat2});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("bmm.out", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("bmm.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::bmm_out(o.host(), call.input(self, "self"), call.input(mat2, "mat2"));
  return o.commit();
}

}  // namespace foo
