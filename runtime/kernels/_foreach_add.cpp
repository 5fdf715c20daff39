// Kernels of aten::_foreach_add for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_add.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/add.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


::std::vector<at::Tensor> _foreach_add(at::TensorList self, at::TensorList other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self, other});
  if (!lists.fast() || alpha.isComplex()) {
    return at::native::foreach_tensor_add_list_kernel_slow(self, other, alpha);
  }
  std::vector<at::Tensor> results = lists.make_results();
  lists.launch("_foreach_add.List", [alpha](rt::ForeachLists& l) {
    for (size_t i = 0; i < l.size(); ++i) {
      at::add_out(l.results()[i], l.host(0)[i], l.host(1)[i], alpha);
    }
  });
  return results;
}

void _foreach_add_(at::TensorList self, at::TensorList other, const at::Scalar & alpha) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self, other});
  if (!lists.fast() || alpha.isComplex()) {
    return at::native::foreach_tensor_add_list_kernel_slow_(self, other, alpha);
  }
  lists.launch("_foreach_add_.List", [alpha](rt::ForeachLists& l) {
    at::native::foreach_tensor_add_list_kernel_slow_(l.host(0), l.host(1), alpha);
  });
}

void _foreach_add_(at::TensorList self, const at::Scalar & scalar) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast() || scalar.isComplex()) {
    return at::native::foreach_tensor_add_scalar_kernel_slow_(self, scalar);
  }
  lists.launch("_foreach_add_.Scalar", [scalar](rt::ForeachLists& l) {
    at::native::foreach_tensor_add_scalar_kernel_slow_(l.host(0), scalar);
  });
}

}  // namespace foo
