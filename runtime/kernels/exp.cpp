// Kernels of aten::exp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/exp.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & exp_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::exp.out has no kernel yet (implement exp_out in kernels/exp.cpp)");
}

}  // namespace foo
