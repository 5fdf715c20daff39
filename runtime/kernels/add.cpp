// Kernels of aten::add for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/add.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & add_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::add.out has no kernel yet (implement add_out in kernels/add.cpp)");
}

}  // namespace foo
