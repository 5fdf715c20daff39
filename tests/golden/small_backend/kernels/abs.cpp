// Kernels of aten::abs for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/abs.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor abs(const at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::abs has no kernel yet (implement abs in kernels/abs.cpp)");
}

at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::abs.out has no kernel yet (implement abs_out in kernels/abs.cpp)");
}

}  // namespace tiny
