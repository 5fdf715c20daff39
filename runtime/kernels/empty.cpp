// Kernels of aten::empty for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/empty.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format) {
  return scaffold::runtime::empty(size, dtype, layout, device, pin_memory, memory_format);
}

}  // namespace foo
