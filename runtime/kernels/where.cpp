// Kernels of aten::where for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/where.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & where_out(const at::Tensor & condition, const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::where.self_out has no kernel yet (implement where_out in kernels/where.cpp)");
}

}  // namespace foo
