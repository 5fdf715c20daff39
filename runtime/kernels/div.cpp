// Kernels of aten::div for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/div.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & div_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::div.out has no kernel yet (implement div_out in kernels/div.cpp)");
}

}  // namespace foo
