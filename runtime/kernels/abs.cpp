// Kernels of aten::abs for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/abs.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::abs.out has no kernel yet (implement abs_out in kernels/abs.cpp)");
}

}  // namespace foo
