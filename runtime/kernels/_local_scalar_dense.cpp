// Kernels of aten::_local_scalar_dense for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_local_scalar_dense.h"

#include <c10/util/Exception.h>

namespace foo {

at::Scalar _local_scalar_dense(const at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::_local_scalar_dense has no kernel yet (implement _local_scalar_dense in kernels/_local_scalar_dense.cpp)");
}

}  // namespace foo
