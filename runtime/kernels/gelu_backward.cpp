// Kernels of aten::gelu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu_backward.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & gelu_backward_out(const at::Tensor & grad_output, const at::Tensor & self, c10::string_view approximate, at::Tensor & grad_input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::gelu_backward.grad_input has no kernel yet (implement gelu_backward_out in kernels/gelu_backward.cpp)");
}

}  // namespace foo
