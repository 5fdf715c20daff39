// Kernels of aten::_adaptive_avg_pool2d for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_adaptive_avg_pool2d.h"

#include <c10/util/Exception.h>

#include <ATen/ops/adaptive_avg_pool2d_cpu_dispatch.h>
#include "core_ops.h"
#include "kernel_support.h"

namespace foo {

at::Tensor _adaptive_avg_pool2d(const at::Tensor & self, at::IntArrayRef output_size) {
  namespace rt = scaffold::runtime;
  // The CPU kernel is adaptive_avg_pool2d.out into an empty result it resizes to self's sizes
  // with the last two replaced, in self's memory format. Allocated so on the device, the result
  // needs no resize; should the CPU kernel still resize it, OutputView moves the result over.
  TORCH_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", self.sizes());
  const rt::KernelCall call("_adaptive_avg_pool2d", self, "self");
  at::DimVector sizes(self.sizes());
  sizes[sizes.size() - 2] = output_size[0];
  sizes[sizes.size() - 1] = output_size[1];
  at::Tensor result = rt::empty(sizes, self.scalar_type(), c10::kStrided, call.device(), std::nullopt, self.suggest_memory_format());
  rt::OutputView o = call.output(result, "result");
  at::cpu::adaptive_avg_pool2d_out(o.host(), call.device_input(self, "self"), output_size);
  return o.commit();
}

}  // namespace foo
