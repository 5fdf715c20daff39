// Kernels of aten::view for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/view.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor view_symint(const at::Tensor & self, c10::SymIntArrayRef size) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::view has no kernel yet (implement view_symint in kernels/view.cpp)");
}

at::Tensor view(const at::Tensor & self, at::ScalarType dtype) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::view.dtype has no kernel yet (implement view in kernels/view.cpp)");
}

}  // namespace tiny
