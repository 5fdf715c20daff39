// Kernels of aten::upsample_nearest2d_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/upsample_nearest2d_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/upsample_nearest2d_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & upsample_nearest2d_backward_out(const at::Tensor & grad_output, at::IntArrayRef output_size, at::IntArrayRef input_size, ::std::optional<double> scales_h, ::std::optional<double> scales_w, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("upsample_nearest2d_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::upsample_nearest2d_backward_out(o.host(), call.device_input(grad_output, "grad_output"), output_size, input_size, scales_h, scales_w);
  return o.commit();
}

}  // namespace foo
