// Kernels of aten::uniform for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/uniform.h"

#include <c10/util/Exception.h>

#include <ATen/ops/uniform_cpu_dispatch.h>
#include "generator.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & uniform_(at::Tensor & self, double from, double to, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  const rt::KernelCall call("uniform_", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::uniform_(host, from, to, rt::cpu_generator(generator, self.device().index()));
  return self;
}

}  // namespace foo
