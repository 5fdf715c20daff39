// Kernels of aten::set for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/set.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor & set_(at::Tensor & self) {
  return scaffold::runtime::set_(self);
}

at::Tensor & set_(at::Tensor & self, at::Storage source) {
  return scaffold::runtime::set_(self, source);
}

at::Tensor & set_(at::Tensor & self, at::Storage source, int64_t storage_offset, at::IntArrayRef size, at::IntArrayRef stride) {
  return scaffold::runtime::set_(self, source, storage_offset, size, stride);
}

at::Tensor & set_(at::Tensor & self, const at::Tensor & source) {
  return scaffold::runtime::set_(self, source);
}

}  // namespace foo
