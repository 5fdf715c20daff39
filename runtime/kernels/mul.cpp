// Kernels of aten::mul for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mul.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & mul_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::mul.out has no kernel yet (implement mul_out in kernels/mul.cpp)");
}

}  // namespace foo
