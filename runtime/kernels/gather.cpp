// Kernels of aten::gather for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gather.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & gather_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, bool sparse_grad, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::gather.out has no kernel yet (implement gather_out in kernels/gather.cpp)");
}

}  // namespace foo
