// Kernels of aten::tanh_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/tanh_backward.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & tanh_backward_out(const at::Tensor & grad_output, const at::Tensor & output, at::Tensor & grad_input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::tanh_backward.grad_input has no kernel yet (implement tanh_backward_out in kernels/tanh_backward.cpp)");
}

}  // namespace foo
