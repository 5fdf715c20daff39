// Kernels of aten::index_select for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index_select.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & index_select_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::index_select.out has no kernel yet (implement index_select_out in kernels/index_select.cpp)");
}

}  // namespace foo
