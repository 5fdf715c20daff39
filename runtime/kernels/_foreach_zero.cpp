// Kernels of aten::_foreach_zero for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_zero.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_zero_native.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


void _foreach_zero_(at::TensorList self) {
  namespace rt = scaffold::runtime;
  // optimizer.zero_grad(set_to_none=False): any dtype.
  rt::ForeachLists lists({self}, rt::ForeachLists::Dtypes::Any);
  if (!lists.fast()) {
    return at::native::foreach_tensor_zero_slow_(self);
  }
  lists.launch("_foreach_zero_", [](rt::ForeachLists& l) { at::native::foreach_tensor_zero_slow_(l.host(0)); });
}

}  // namespace foo
