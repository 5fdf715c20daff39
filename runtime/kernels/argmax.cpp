// Kernels of aten::argmax for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/argmax.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & argmax_out(const at::Tensor & self, ::std::optional<int64_t> dim, bool keepdim, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::argmax.out has no kernel yet (implement argmax_out in kernels/argmax.cpp)");
}

}  // namespace foo
