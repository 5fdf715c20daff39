// Kernels of aten::max for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/max.h"

#include <c10/util/Exception.h>

namespace foo {

::std::tuple<at::Tensor &,at::Tensor &> max_out(const at::Tensor & self, int64_t dim, bool keepdim, at::Tensor & max, at::Tensor & max_values) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::max.dim_max has no kernel yet (implement max_out in kernels/max.cpp)");
}

}  // namespace foo
