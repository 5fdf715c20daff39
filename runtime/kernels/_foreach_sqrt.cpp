// Kernels of aten::_foreach_sqrt for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_sqrt.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/sqrt.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


::std::vector<at::Tensor> _foreach_sqrt(at::TensorList self) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast()) {
    return at::native::foreach_tensor_sqrt_slow(self);
  }
  std::vector<at::Tensor> results = lists.make_results();
  lists.launch("_foreach_sqrt", [](rt::ForeachLists& l) {
    for (size_t i = 0; i < l.size(); ++i) {
      at::sqrt_out(l.results()[i], l.host(0)[i]);
    }
  });
  return results;
}

void _foreach_sqrt_(at::TensorList self) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast()) {
    return at::native::foreach_tensor_sqrt_slow_(self);
  }
  lists.launch("_foreach_sqrt_", [](rt::ForeachLists& l) { at::native::foreach_tensor_sqrt_slow_(l.host(0)); });
}

}  // namespace foo
