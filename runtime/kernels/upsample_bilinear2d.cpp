// Kernels of aten::upsample_bilinear2d for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/upsample_bilinear2d.h"

#include <c10/util/Exception.h>

#include <ATen/ops/upsample_bilinear2d_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & upsample_bilinear2d_out(const at::Tensor & self, at::IntArrayRef output_size, bool align_corners, ::std::optional<double> scales_h, ::std::optional<double> scales_w, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("upsample_bilinear2d.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::upsample_bilinear2d_out(o.host(), call.device_input(self, "self"), output_size, align_corners, scales_h, scales_w);
  return o.commit();
}

}  // namespace foo
