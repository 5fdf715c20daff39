// Kernels of aten::arange for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/arange.h"

#include <c10/util/Exception.h>

#include <ATen/ops/arange_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & arange_out(const at::Scalar & start, const at::Scalar & end, const at::Scalar & step, at::Tensor & out) {
  // The CPU kernel checks the range and resizes out (torch.arange passes an empty one); OutputView
  // moves a resized result to the device.
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("arange.start_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::arange_out(o.host(), start, end, step);
  return o.commit();
}

}  // namespace foo
