// Kernels of aten::relu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/relu.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor relu(const at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::relu has no kernel yet (implement relu in kernels/relu.cpp)");
}

at::Tensor & relu_(at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::relu_ has no kernel yet (implement relu_ in kernels/relu.cpp)");
}

}  // namespace foo
