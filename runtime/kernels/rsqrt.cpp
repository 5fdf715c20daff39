// Kernels of aten::rsqrt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/rsqrt.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & rsqrt_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::rsqrt.out has no kernel yet (implement rsqrt_out in kernels/rsqrt.cpp)");
}

}  // namespace foo
