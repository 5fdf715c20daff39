// Kernels of aten::zero for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/zero.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & zero_(at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::zero_ has no kernel yet (implement zero_ in kernels/zero.cpp)");
}

}  // namespace foo
