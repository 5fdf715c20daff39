// Kernels of aten::sum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/sum.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & sum_out(const at::Tensor & self, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::sum.IntList_out has no kernel yet (implement sum_out in kernels/sum.cpp)");
}

}  // namespace foo
