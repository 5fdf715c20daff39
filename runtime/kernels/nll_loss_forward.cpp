// Kernels of aten::nll_loss_forward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_forward.h"

#include <c10/util/Exception.h>

namespace foo {

::std::tuple<at::Tensor &,at::Tensor &> nll_loss_forward_out(const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, at::Tensor & output, at::Tensor & total_weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::nll_loss_forward.output has no kernel yet (implement nll_loss_forward_out in kernels/nll_loss_forward.cpp)");
}

}  // namespace foo
