// Kernels of aten::_foreach_neg for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_neg.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/neg.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


::std::vector<at::Tensor> _foreach_neg(at::TensorList self) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast()) {
    return at::native::foreach_tensor_neg_slow(self);
  }
  std::vector<at::Tensor> results = lists.make_results();
  lists.launch("_foreach_neg", [](rt::ForeachLists& l) {
    for (size_t i = 0; i < l.size(); ++i) {
      at::neg_out(l.results()[i], l.host(0)[i]);
    }
  });
  return results;
}

}  // namespace foo
