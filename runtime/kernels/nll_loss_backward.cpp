// Kernels of aten::nll_loss_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_backward.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & nll_loss_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, const at::Tensor & total_weight, at::Tensor & grad_input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::nll_loss_backward.grad_input has no kernel yet (implement nll_loss_backward_out in kernels/nll_loss_backward.cpp)");
}

}  // namespace foo
