// Kernels of aten::mm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mm_cpu_dispatch.h>
#include <ATen/ops/mm_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & mm_out(const at::Tensor & self, const at::Tensor & mat2, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "mm.out: expected two 2-D tensors, got ", self.dim(), "-D and ", mat2.dim(), "-D");
  rt::StructuredOut<at::native::structured_mm_out_cpu> op(out, {self, mat2});
  if (op.native()) {
    op.meta(op.input(0), op.input(1));
    if (op.fits()) {
      op.launch("mm.out", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("mm.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::mm_out(o.host(), call.input(self, "self"), call.input(mat2, "mat2"));
  return o.commit();
}

}  // namespace foo
