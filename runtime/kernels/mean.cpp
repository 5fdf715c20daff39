// Kernels of aten::mean for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mean.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mean_cpu_dispatch.h>
#include <ATen/ops/mean_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & mean_out(const at::Tensor & self, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_mean_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0), dim, keepdim, dtype);
    if (op.fits()) {
      op.launch("mean.out", [dims = rt::OwnedDims(dim), keepdim, dtype](auto& op) { op.impl(op.input(0), dims, keepdim, dtype, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("mean.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::mean_out(o.host(), call.input(self, "self"), dim, keepdim, dtype);
  return o.commit();
}

}  // namespace foo
