// Kernels of aten::tril for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/tril.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor & tril_out(const at::Tensor & self, int64_t diagonal, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::tril.out has no kernel yet (implement tril_out in kernels/tril.cpp)");
}

}  // namespace tiny
