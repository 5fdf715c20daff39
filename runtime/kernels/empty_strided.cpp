// Kernels of aten::empty_strided for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/empty_strided.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  return scaffold::runtime::empty_strided(size, stride, dtype, layout, device, pin_memory);
}

}  // namespace foo
