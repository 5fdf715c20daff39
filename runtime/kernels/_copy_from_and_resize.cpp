// Kernels of aten::_copy_from_and_resize for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_copy_from_and_resize.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor _copy_from_and_resize(const at::Tensor & self, const at::Tensor & dst) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::_copy_from_and_resize has no kernel yet (implement _copy_from_and_resize in kernels/_copy_from_and_resize.cpp)");
}

}  // namespace foo
