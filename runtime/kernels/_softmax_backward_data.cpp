// Kernels of aten::_softmax_backward_data for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_softmax_backward_data.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & _softmax_backward_data_out(const at::Tensor & grad_output, const at::Tensor & output, int64_t dim, at::ScalarType input_dtype, at::Tensor & grad_input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::_softmax_backward_data.out has no kernel yet (implement _softmax_backward_data_out in kernels/_softmax_backward_data.cpp)");
}

}  // namespace foo
