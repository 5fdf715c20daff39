// Kernels of aten::empty_strided for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/empty_strided.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::empty_strided has no kernel yet (implement empty_strided in kernels/empty_strided.cpp)");
}

}  // namespace foo
