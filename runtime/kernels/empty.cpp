// Kernels of aten::empty for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/empty.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::empty.memory_format has no kernel yet (implement empty in kernels/empty.cpp)");
}

}  // namespace foo
