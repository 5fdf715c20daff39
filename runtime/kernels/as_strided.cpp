// Kernels of aten::as_strided for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/as_strided.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor as_strided(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<int64_t> storage_offset) {
  return scaffold::runtime::as_strided(self, size, stride, storage_offset);
}

}  // namespace foo
