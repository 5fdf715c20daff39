// Kernels of aten::maximum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/maximum.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & maximum_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::maximum.out has no kernel yet (implement maximum_out in kernels/maximum.cpp)");
}

}  // namespace foo
