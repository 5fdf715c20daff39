// Kernels of aten::mean for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mean.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & mean_out(const at::Tensor & self, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::mean.out has no kernel yet (implement mean_out in kernels/mean.cpp)");
}

}  // namespace foo
