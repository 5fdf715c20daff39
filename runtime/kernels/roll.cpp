// Kernels of aten::roll for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/roll.h"

#include <c10/util/Exception.h>

#include <ATen/ops/roll_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor roll(const at::Tensor & self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  namespace rt = scaffold::runtime;
  // Launched for a contiguous tensor rolled along valid dims (a shifted window's
  // attention rolls its feature map before and after each block): the CPU kernel's result,
  // contiguous then, is copied into a device tensor like self. Anything else runs inline, where
  // the CPU kernel checks shifts and dims at the call and decides the result's strides.
  bool launchable = !shifts.empty() && shifts.size() == dims.size() && self.numel() > 0 && self.is_contiguous();
  for (size_t i = 0; launchable && i < dims.size(); ++i) {
    launchable = dims[i] >= -self.dim() && dims[i] < self.dim();
  }
  if (launchable) {
    rt::HostKernelLaunch launch({self});
    if (launch.native()) {
      at::Tensor result = launch.result_like(self);
      launch.run("roll", [shifts = shifts.vec(), dims = dims.vec()](const rt::HostViews& in) {
        return std::make_tuple(at::cpu::roll(in[0], shifts, dims));
      });
      return result;
    }
  }
  const rt::KernelCall call("roll", self, "self");
  return call.adopt(at::cpu::roll(call.device_input(self, "self"), shifts, dims));
}

}  // namespace foo
