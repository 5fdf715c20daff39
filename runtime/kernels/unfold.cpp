// Kernels of aten::unfold for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/unfold.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor unfold(const at::Tensor & self, int64_t dimension, int64_t size, int64_t step) {
  return scaffold::runtime::unfold(self, dimension, size, step);
}

}  // namespace foo
