// Kernels of aten::uniform for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/uniform.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

at::Tensor & uniform_(at::Tensor & self, double from, double to, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::uniform_(self, from, to, generator);
}

}  // namespace foo
