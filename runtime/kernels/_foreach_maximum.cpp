// Kernels of aten::_foreach_maximum for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_maximum.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_maximum_native.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


void _foreach_maximum_(at::TensorList self, at::TensorList other) {
  namespace rt = scaffold::runtime;
  // Adam's amsgrad. ATen's loop is clamp_min's: maximum that propagates NaN.
  rt::ForeachLists lists({self, other});
  if (!lists.fast()) {
    return at::native::foreach_tensor_clamp_min_list_kernel_slow_(self, other);
  }
  lists.launch("_foreach_maximum_.List", [](rt::ForeachLists& l) {
    at::native::foreach_tensor_clamp_min_list_kernel_slow_(l.host(0), l.host(1));
  });
}

}  // namespace foo
