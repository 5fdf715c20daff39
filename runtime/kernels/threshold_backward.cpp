// Kernels of aten::threshold_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/threshold_backward.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & threshold_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & threshold, at::Tensor & grad_input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::threshold_backward.grad_input has no kernel yet (implement threshold_backward_out in kernels/threshold_backward.cpp)");
}

}  // namespace foo
