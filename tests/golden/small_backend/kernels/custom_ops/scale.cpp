// Kernels of the custom op(s) tiny::scale, tiny::scale.out for the tiny backend: CPU and device.
// Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates
// the kernel signatures when the schema changes and keeps every line you write.
#include "CustomOps.h"

#include <c10/util/Exception.h>

namespace tiny::custom_ops {

at::Tensor scale_cpu(const at::Tensor & self, double factor) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::scale has no CPU kernel yet (implement scale_cpu in kernels/custom_ops/scale.cpp)");
}

at::Tensor scale_tiny(const at::Tensor & self, double factor) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::scale has no tiny kernel yet (implement scale_tiny in kernels/custom_ops/scale.cpp)");
}

at::Tensor & scale_out_tiny(const at::Tensor & self, double factor, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::scale.out has no tiny kernel yet (implement scale_out_tiny in kernels/custom_ops/scale.cpp)");
}

}  // namespace tiny::custom_ops
