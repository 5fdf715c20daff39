// Kernels of aten::resize for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/resize.h"

#include <c10/util/Exception.h>

namespace foo {

const at::Tensor & resize_(const at::Tensor & self, at::IntArrayRef size, ::std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::resize_ has no kernel yet (implement resize_ in kernels/resize.cpp)");
}

}  // namespace foo
