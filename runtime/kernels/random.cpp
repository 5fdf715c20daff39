// Kernels of aten::random for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/random.h"

#include <c10/util/Exception.h>

#include <ATen/ops/random_cpu_dispatch.h>
#include "generator.h"
#include "kernel_support.h"

namespace foo {

// The CPU kernels check the range against the dtype, on the caller (they run inline).

at::Tensor & random_(at::Tensor & self, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("random_", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::random_(host, rt::cpu_generator(generator, call.device().index()));
  return self;
}

at::Tensor & random_(at::Tensor & self, int64_t from, ::std::optional<int64_t> to, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("random_.from", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::random_(host, from, to, rt::cpu_generator(generator, call.device().index()));
  return self;
}

at::Tensor & random_(at::Tensor & self, int64_t to, ::std::optional<at::Generator> generator) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("random_.to", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::random_(host, to, rt::cpu_generator(generator, call.device().index()));
  return self;
}

}  // namespace foo
