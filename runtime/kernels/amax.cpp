// Kernels of aten::amax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/amax.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & amax_out(const at::Tensor & self, at::IntArrayRef dim, bool keepdim, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::amax.out has no kernel yet (implement amax_out in kernels/amax.cpp)");
}

}  // namespace foo
