// Kernels of aten::scatter_add for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/scatter_add.h"

#include <c10/util/Exception.h>

#include <ATen/ops/scatter_add_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & scatter_add_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, const at::Tensor & src, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  // The index dtype is left to ATen's CPU kernel, so the device accepts exactly what the CPU
  // does (int64, and int32 since torch 2.11) with the CPU's message for anything else.
  const rt::KernelCall call("scatter_add.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::scatter_add_out(o.host(), call.input(self, "self"), dim, call.input(index, "index"), call.input(src, "src"));
  return o.commit();
}

}  // namespace foo
