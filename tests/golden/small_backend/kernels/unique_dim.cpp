// Kernels of aten::unique_dim for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/unique_dim.h"

#include <c10/util/Exception.h>

namespace tiny {

::std::tuple<at::Tensor &,at::Tensor &,at::Tensor &> unique_dim_out(const at::Tensor & self, int64_t dim, bool sorted, bool return_inverse, bool return_counts, at::Tensor & out0, at::Tensor & out1, at::Tensor & out2) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::unique_dim.out has no kernel yet (implement unique_dim_out in kernels/unique_dim.cpp)");
}

}  // namespace tiny
