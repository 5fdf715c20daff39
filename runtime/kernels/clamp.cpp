// Kernels of aten::clamp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/clamp.h"

#include <c10/util/Exception.h>

#include <ATen/ops/clamp_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & clamp_out(const at::Tensor & self, const ::std::optional<at::Scalar> & min, const ::std::optional<at::Scalar> & max, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(min.has_value() || max.has_value(), "clamp.out: at least one of 'min' or 'max' must not be None");
  const rt::KernelCall call("clamp.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::clamp_out(o.host(), call.input(self, "self"), min, max);
  return o.commit();
}

}  // namespace foo
