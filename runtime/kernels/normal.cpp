// Kernels of aten::normal for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/normal.h"

#include <c10/util/Exception.h>

#include <ATen/ops/normal_cpu_dispatch.h>
#include "generator.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & normal_(at::Tensor & self, double mean, double std, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(std >= 0.0, "normal_ expects std >= 0.0, but found std ", std);
  const rt::KernelCall call("normal_", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::normal_(host, mean, std, rt::cpu_generator(generator, self.device().index()));
  return self;
}

}  // namespace foo
