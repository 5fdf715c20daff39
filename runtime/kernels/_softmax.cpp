// Kernels of aten::_softmax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_softmax.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_softmax_cpu_dispatch.h>
#include <ATen/ops/_softmax_native.h>
#include <ATen/ops/empty.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & _softmax_out(const at::Tensor & self, int64_t dim, bool half_to_float, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("_softmax.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::_softmax_out(o.host(), call.input(self, "self"), dim, half_to_float);
  return o.commit();
}

at::Tensor _softmax(const at::Tensor & self, int64_t dim, bool half_to_float) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_softmax_cpu_out> op({self});
  if (op.native()) {
    op.meta(op.input(0), dim, half_to_float);
    return op.launch("_softmax", [dim, half_to_float](auto& op) { op.impl(op.input(0), dim, half_to_float, op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, self.options().dtype(half_to_float ? at::kFloat : self.scalar_type()));
  return _softmax_out(self, dim, half_to_float, result);
}

}  // namespace foo
