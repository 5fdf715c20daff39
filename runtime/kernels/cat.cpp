// Kernels of aten::cat for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cat.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & cat_out(const at::ITensorListRef & tensors, int64_t dim, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::cat.out has no kernel yet (implement cat_out in kernels/cat.cpp)");
}

}  // namespace foo
