// Kernels of aten::all for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/all.h"

#include <c10/util/Exception.h>

#include <ATen/ops/all_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & all_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("all.all_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::all_out(o.host(), call.device_input(self, "self"));
  return o.commit();
}

at::Tensor & all_out(const at::Tensor & self, int64_t dim, bool keepdim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("all.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::all_out(o.host(), call.device_input(self, "self"), dim, keepdim);
  return o.commit();
}

}  // namespace foo
