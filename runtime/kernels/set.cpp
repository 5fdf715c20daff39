// Kernels of aten::set for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/set.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & set_(at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::set_ has no kernel yet (implement set_ in kernels/set.cpp)");
}

at::Tensor & set_(at::Tensor & self, at::Storage source) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::set_.source_Storage has no kernel yet (implement set_ in kernels/set.cpp)");
}

at::Tensor & set_(at::Tensor & self, at::Storage source, int64_t storage_offset, at::IntArrayRef size, at::IntArrayRef stride) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::set_.source_Storage_storage_offset has no kernel yet (implement set_ in kernels/set.cpp)");
}

at::Tensor & set_(at::Tensor & self, const at::Tensor & source) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::set_.source_Tensor has no kernel yet (implement set_ in kernels/set.cpp)");
}

}  // namespace foo
