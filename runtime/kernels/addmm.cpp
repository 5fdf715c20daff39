// Kernels of aten::addmm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/addmm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/addmm_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & addmm_out(const at::Tensor & self, const at::Tensor & mat1, const at::Tensor & mat2, const at::Scalar & beta, const at::Scalar & alpha, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm.out: expected 2-D mat1 and mat2, got ", mat1.dim(), "-D and ", mat2.dim(), "-D");
  rt::StructuredOut<at::native::structured_addmm_out_cpu> op(out, {self, mat1, mat2});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), op.input(2), beta, alpha);
    if (op.fits()) {
      op.launch("addmm.out", [alpha, beta](auto& op) { op.impl(op.input(0), op.input(1), op.input(2), beta, alpha, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("addmm.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::addmm_out(o.host(), call.input(self, "self"), call.input(mat1, "mat1"), call.input(mat2, "mat2"), beta, alpha);
  return o.commit();
}

}  // namespace foo
