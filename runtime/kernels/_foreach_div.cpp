// Kernels of aten::_foreach_div for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_div.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include <ATen/ops/_foreach_div_native.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


void _foreach_div_(at::TensorList self, at::ArrayRef<at::Scalar> scalars) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast() || scalars.size() != lists.size() || std::any_of(scalars.begin(), scalars.end(), [](const at::Scalar& s) { return s.isComplex(); })) {
    return at::native::foreach_tensor_div_scalarlist_kernel_slow_(self, scalars);
  }
  lists.launch("_foreach_div_.ScalarList", [scalars = scalars.vec()](rt::ForeachLists& l) {
    at::native::foreach_tensor_div_scalarlist_kernel_slow_(l.host(0), scalars);
  });
}

}  // namespace foo
