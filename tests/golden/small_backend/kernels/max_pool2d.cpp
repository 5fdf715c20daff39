// Kernels of aten::max_pool2d for the tiny backend.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/max_pool2d.h"

#include <c10/util/Exception.h>

namespace tiny {

at::Tensor max_pool2d(const at::Tensor & self, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::max_pool2d has no kernel yet (implement max_pool2d in kernels/max_pool2d.cpp)");
}

}  // namespace tiny
