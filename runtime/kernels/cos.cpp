// Kernels of aten::cos for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cos.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & cos_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::cos.out has no kernel yet (implement cos_out in kernels/cos.cpp)");
}

}  // namespace foo
