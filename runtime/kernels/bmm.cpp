// Kernels of aten::bmm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/bmm.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & bmm_out(const at::Tensor & self, const at::Tensor & mat2, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::bmm.out has no kernel yet (implement bmm_out in kernels/bmm.cpp)");
}

}  // namespace foo
