// Kernels of aten::_efficientzerotensor for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_efficientzerotensor.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor _efficientzerotensor(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  return scaffold::runtime::_efficientzerotensor(size, dtype, layout, device, pin_memory);
}

}  // namespace foo
