// Kernels of aten::bernoulli for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/bernoulli.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

at::Tensor & bernoulli_(at::Tensor & self, double p, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::bernoulli_(self, p, generator);
}

}  // namespace foo
