// Kernels of aten::addmm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/addmm.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & addmm_out(const at::Tensor & self, const at::Tensor & mat1, const at::Tensor & mat2, const at::Scalar & beta, const at::Scalar & alpha, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::addmm.out has no kernel yet (implement addmm_out in kernels/addmm.cpp)");
}

}  // namespace foo
