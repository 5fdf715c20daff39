// Kernels of aten::native_dropout_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_dropout_backward.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

at::Tensor native_dropout_backward(const at::Tensor & grad_output, const at::Tensor & mask, double scale) {
  return scaffold::runtime::native_dropout_backward(grad_output, mask, scale);
}

}  // namespace foo
