// Kernels of aten::argmax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/argmax.h"

#include <c10/util/Exception.h>

#include <ATen/ops/argmax_cpu_dispatch.h>
#include <ATen/ops/argmax_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & argmax_out(const at::Tensor & self, ::std::optional<int64_t> dim, bool keepdim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_argmax_out> op(out, {self});
  if (op.native()) {
    op.meta(op.input(0), dim, keepdim);
    if (op.fits()) {
      op.launch("argmax.out", [dim, keepdim](auto& op) { op.impl(op.input(0), dim, keepdim, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("argmax.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::argmax_out(o.host(), call.input(self, "self"), dim, keepdim);
  return o.commit();
}

}  // namespace foo
