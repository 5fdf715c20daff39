// Kernels of aten::roll for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/roll.h"

#include <c10/util/Exception.h>

#include <ATen/ops/roll_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor roll(const at::Tensor & self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks shifts and dims; it has no out= variant, so its result is copied to the
  // device.
  const rt::KernelCall call("roll", self, "self");
  return call.adopt(at::cpu::roll(call.device_input(self, "self"), shifts, dims));
}

}  // namespace foo
