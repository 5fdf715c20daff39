// Kernels of aten::neg for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/neg.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & neg_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::neg.out has no kernel yet (implement neg_out in kernels/neg.cpp)");
}

}  // namespace foo
