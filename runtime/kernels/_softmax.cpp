// Kernels of aten::_softmax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_softmax.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & _softmax_out(const at::Tensor & self, int64_t dim, bool half_to_float, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::_softmax.out has no kernel yet (implement _softmax_out in kernels/_softmax.cpp)");
}

}  // namespace foo
