// Kernels of aten::_foreach_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_norm.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/linalg_vector_norm.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


::std::vector<at::Tensor> _foreach_norm(at::TensorList self, const at::Scalar & ord, ::std::optional<at::ScalarType> dtype) {
  namespace rt = scaffold::runtime;
  // clip_grad_norm_: one 0-dim norm per tensor, of `dtype` or the tensor's (real) dtype.
  rt::ForeachLists lists({self});
  if (!lists.fast() || ord.isComplex() || (dtype.has_value() && !at::isFloatingType(*dtype))) {
    return at::native::foreach_tensor_norm_slow(self, ord, dtype);
  }
  std::vector<at::Tensor> results = lists.make_results(dtype, /*scalar=*/true);
  lists.launch("_foreach_norm.Scalar", [ord, dtype](rt::ForeachLists& l) {
    for (size_t i = 0; i < l.size(); ++i) {
      at::linalg_vector_norm_out(l.results()[i], l.host(0)[i], ord, at::OptionalIntArrayRef(), false, dtype);
    }
  });
  return results;
}

}  // namespace foo
