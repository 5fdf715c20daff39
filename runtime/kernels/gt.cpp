// Kernels of aten::gt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gt.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & gt_out(const at::Tensor & self, const at::Scalar & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::gt.Scalar_out has no kernel yet (implement gt_out in kernels/gt.cpp)");
}

}  // namespace foo
