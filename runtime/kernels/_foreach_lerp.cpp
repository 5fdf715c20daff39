// Kernels of aten::_foreach_lerp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_lerp.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_lerp_native.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


void _foreach_lerp_(at::TensorList self, at::TensorList tensors1, const at::Scalar & weight) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self, tensors1});
  if (!lists.fast() || weight.isComplex()) {
    return at::native::foreach_tensor_lerp_list_kernel_slow_(self, tensors1, weight);
  }
  lists.launch("_foreach_lerp_.Scalar", [weight](rt::ForeachLists& l) {
    at::native::foreach_tensor_lerp_list_kernel_slow_(l.host(0), l.host(1), weight);
  });
}

}  // namespace foo
