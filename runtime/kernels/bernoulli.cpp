// Kernels of aten::bernoulli for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/bernoulli.h"

#include <c10/util/Exception.h>

#include <ATen/ops/bernoulli_cpu_dispatch.h>
#include "generator.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & bernoulli_(at::Tensor & self, double p, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  const rt::KernelCall call("bernoulli_.float", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::bernoulli_(host, p, rt::cpu_generator(generator, call.device().index()));
  return self;
}

}  // namespace foo
