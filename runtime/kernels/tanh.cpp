// Kernels of aten::tanh for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/tanh.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & tanh_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::tanh.out has no kernel yet (implement tanh_out in kernels/tanh.cpp)");
}

}  // namespace foo
