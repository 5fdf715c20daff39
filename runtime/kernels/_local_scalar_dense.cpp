// Kernels of aten::_local_scalar_dense for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_local_scalar_dense.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Scalar _local_scalar_dense(const at::Tensor & self) {
  return scaffold::runtime::_local_scalar_dense(self);
}

}  // namespace foo
