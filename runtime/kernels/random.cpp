// Kernels of aten::random for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/random.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

at::Tensor & random_(at::Tensor & self, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::random_(self, generator);
}

at::Tensor & random_(at::Tensor & self, int64_t from, ::std::optional<int64_t> to, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::random_(self, from, to, generator);
}

at::Tensor & random_(at::Tensor & self, int64_t to, ::std::optional<at::Generator> generator) {
  return scaffold::runtime::random_(self, to, generator);
}

}  // namespace foo
