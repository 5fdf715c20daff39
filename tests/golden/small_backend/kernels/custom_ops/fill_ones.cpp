// Kernels of the custom op(s) tiny::fill_ones for the tiny backend: CPU and device.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when the schema changes and keeps every line you write.
#include "CustomOps.h"

#include <c10/util/Exception.h>

namespace tiny::custom_ops {

void fill_ones_cpu(at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::fill_ones has no CPU kernel yet (implement fill_ones_cpu in kernels/custom_ops/fill_ones.cpp)");
}

void fill_ones_tiny(at::Tensor & self) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::fill_ones has no tiny kernel yet (implement fill_ones_tiny in kernels/custom_ops/fill_ones.cpp)");
}

}  // namespace tiny::custom_ops
