// Kernels of aten::sqrt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sqrt.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & sqrt_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::sqrt.out has no kernel yet (implement sqrt_out in kernels/sqrt.cpp)");
}

}  // namespace foo
