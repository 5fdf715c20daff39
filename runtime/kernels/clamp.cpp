// Kernels of aten::clamp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/clamp.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & clamp_out(const at::Tensor & self, const ::std::optional<at::Scalar> & min, const ::std::optional<at::Scalar> & max, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::clamp.out has no kernel yet (implement clamp_out in kernels/clamp.cpp)");
}

}  // namespace foo
