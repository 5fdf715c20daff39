// Kernels of aten::resize for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/resize.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

const at::Tensor & resize_(const at::Tensor & self, at::IntArrayRef size, ::std::optional<at::MemoryFormat> memory_format) {
  return scaffold::runtime::resize_(self, size, memory_format);
}

}  // namespace foo
