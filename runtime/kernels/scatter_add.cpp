// Kernels of aten::scatter_add for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/scatter_add.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & scatter_add_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, const at::Tensor & src, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::scatter_add.out has no kernel yet (implement scatter_add_out in kernels/scatter_add.cpp)");
}

}  // namespace foo
