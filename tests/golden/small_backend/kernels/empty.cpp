// Kernels of aten::empty for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/empty.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::empty.memory_format has no kernel yet (implement empty in kernels/empty.cpp)");
}

}  // namespace tiny
