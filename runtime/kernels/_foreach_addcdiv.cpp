// Kernels of aten::_foreach_addcdiv for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_addcdiv.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include <ATen/ops/_foreach_addcdiv_native.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


void _foreach_addcdiv_(at::TensorList self, at::TensorList tensor1, at::TensorList tensor2, const at::Scalar & value) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self, tensor1, tensor2});
  if (!lists.fast() || value.isComplex()) {
    return at::native::foreach_tensor_addcdiv_scalar_slow_(self, tensor1, tensor2, value);
  }
  lists.launch("_foreach_addcdiv_.Scalar", [value](rt::ForeachLists& l) {
    at::native::foreach_tensor_addcdiv_scalar_slow_(l.host(0), l.host(1), l.host(2), value);
  });
}

void _foreach_addcdiv_(at::TensorList self, at::TensorList tensor1, at::TensorList tensor2, at::ArrayRef<at::Scalar> scalars) {
  namespace rt = scaffold::runtime;
  // Adam's step sizes, one per parameter.
  rt::ForeachLists lists({self, tensor1, tensor2});
  if (!lists.fast() || scalars.size() != lists.size() || std::any_of(scalars.begin(), scalars.end(), [](const at::Scalar& s) { return s.isComplex(); })) {
    return at::native::foreach_tensor_addcdiv_scalarlist_slow_(self, tensor1, tensor2, scalars);
  }
  lists.launch("_foreach_addcdiv_.ScalarList", [scalars = scalars.vec()](rt::ForeachLists& l) {
    at::native::foreach_tensor_addcdiv_scalarlist_slow_(l.host(0), l.host(1), l.host(2), scalars);
  });
}

}  // namespace foo
