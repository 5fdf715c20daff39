// Kernels of aten::sigmoid for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sigmoid.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & sigmoid_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::sigmoid.out has no kernel yet (implement sigmoid_out in kernels/sigmoid.cpp)");
}

}  // namespace foo
