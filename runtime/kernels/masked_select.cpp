// Kernels of aten::masked_select for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/masked_select.h"

#include <c10/util/Exception.h>

#include <ATen/ops/masked_select_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

// The result's length is the number of true elements of the mask: both variants run inline, on
// host views that wait for the work queued before them (CUDA's kernel synchronises to read the
// count, too).

at::Tensor masked_select(const at::Tensor & self, const at::Tensor & mask) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("masked_select", self, "self");
  return call.adopt(at::cpu::masked_select(call.device_input(self, "self"), call.device_input(mask, "mask")));
}

at::Tensor & masked_select_out(const at::Tensor & self, const at::Tensor & mask, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("masked_select.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::masked_select_out(o.host(), call.device_input(self, "self"), call.device_input(mask, "mask"));
  return o.commit();
}

}  // namespace foo
