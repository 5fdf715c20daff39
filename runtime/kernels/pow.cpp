// Kernels of aten::pow for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/pow.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & pow_out(const at::Tensor & self, const at::Scalar & exponent, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::pow.Tensor_Scalar_out has no kernel yet (implement pow_out in kernels/pow.cpp)");
}

}  // namespace foo
