// Kernels of aten::gelu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & gelu_out(const at::Tensor & self, c10::string_view approximate, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::gelu.out has no kernel yet (implement gelu_out in kernels/gelu.cpp)");
}

}  // namespace foo
