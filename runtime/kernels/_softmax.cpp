// Kernels of aten::_softmax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_softmax.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_softmax_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & _softmax_out(const at::Tensor & self, int64_t dim, bool half_to_float, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("_softmax.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::_softmax_out(o.host(), call.input(self, "self"), dim, half_to_float);
  return o.commit();
}

}  // namespace foo
