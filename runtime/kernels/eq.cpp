// Kernels of aten::eq for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/eq.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & eq_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::eq.Tensor_out has no kernel yet (implement eq_out in kernels/eq.cpp)");
}

}  // namespace foo
