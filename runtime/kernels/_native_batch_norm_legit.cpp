// Kernels of aten::_native_batch_norm_legit for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_native_batch_norm_legit.h"

#include <c10/util/Exception.h>

#include "native/native_batch_norm.h"

namespace foo {

// Batch norm's functional forms (torch.compile's decompositions and torch.export use them): the
// CPU's kernels are native_batch_norm's, and so are foo's.

::std::tuple<at::Tensor,at::Tensor,at::Tensor> _native_batch_norm_legit(const at::Tensor & input, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, at::Tensor & running_mean, at::Tensor & running_var, bool training, double momentum, double eps) {
  return foo::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

::std::tuple<at::Tensor,at::Tensor,at::Tensor> _native_batch_norm_legit(const at::Tensor & input, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, bool training, double momentum, double eps) {
  return foo::native_batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

}  // namespace foo
