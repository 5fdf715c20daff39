// Kernels of aten::silu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/silu.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & silu_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::silu.out has no kernel yet (implement silu_out in kernels/silu.cpp)");
}

}  // namespace foo
