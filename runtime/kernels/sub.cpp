// Kernels of aten::sub for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sub.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & sub_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::sub.out has no kernel yet (implement sub_out in kernels/sub.cpp)");
}

}  // namespace foo
