// Kernels of aten::sin for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sin.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & sin_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::sin.out has no kernel yet (implement sin_out in kernels/sin.cpp)");
}

}  // namespace foo
