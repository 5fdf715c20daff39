// Kernels of aten::mse_loss for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mse_loss.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & mse_loss_out(const at::Tensor & self, const at::Tensor & target, int64_t reduction, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::mse_loss.out has no kernel yet (implement mse_loss_out in kernels/mse_loss.cpp)");
}

}  // namespace foo
