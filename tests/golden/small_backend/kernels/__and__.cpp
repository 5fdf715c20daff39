// Kernels of aten::__and__ for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/__and__.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor __and__(const at::Tensor & self, const at::Tensor & other) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::__and__.Tensor has no kernel yet (implement __and__ in kernels/__and__.cpp)");
}

}  // namespace tiny
