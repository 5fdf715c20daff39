// Kernels of aten::amax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/amax.h"

#include <c10/util/Exception.h>

#include <ATen/ops/amax_cpu_dispatch.h>
#include <ATen/ops/amax_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & amax_out(const at::Tensor & self, at::IntArrayRef dim, bool keepdim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_amax_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0), dim, keepdim);
    if (op.fits()) {
      op.launch("amax.out", [dims = at::DimVector(dim), keepdim](auto& op) { op.impl(op.input(0), dims, keepdim, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("amax.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::amax_out(o.host(), call.input(self, "self"), dim, keepdim);
  return o.commit();
}

}  // namespace foo
