// Kernels of aten::normal for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/normal.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

at::Tensor & normal_(at::Tensor & self, double mean, double std, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::normal_(self, mean, std, generator);
}

}  // namespace foo
