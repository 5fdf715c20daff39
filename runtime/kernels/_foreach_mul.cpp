// Kernels of aten::_foreach_mul for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_foreach_mul.h"

#include <c10/util/Exception.h>

#include <ATen/ScalarOps.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/mul.h>
#include "foreach_ops.h"

namespace foo {

// foreach_ops.h: one launch for the whole lists when they take CUDA's fast route, else
// PyTorch's loop, one op per tensor.


::std::vector<at::Tensor> _foreach_mul(at::TensorList self, const at::Scalar & scalar) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast() || scalar.isComplex()) {
    return at::native::foreach_tensor_mul_scalar_kernel_slow(self, scalar);
  }
  std::vector<at::Tensor> results = lists.make_results();
  lists.launch("_foreach_mul.Scalar", [scalar](rt::ForeachLists& l) {
    const at::Tensor factor = at::native::wrapped_scalar_tensor(scalar);
    for (size_t i = 0; i < l.size(); ++i) {
      at::mul_out(l.results()[i], l.host(0)[i], factor);
    }
  });
  return results;
}

void _foreach_mul_(at::TensorList self, const at::Scalar & scalar) {
  namespace rt = scaffold::runtime;
  rt::ForeachLists lists({self});
  if (!lists.fast() || scalar.isComplex()) {
    return at::native::foreach_tensor_mul_scalar_kernel_slow_(self, scalar);
  }
  lists.launch("_foreach_mul_.Scalar", [scalar](rt::ForeachLists& l) {
    at::native::foreach_tensor_mul_scalar_kernel_slow_(l.host(0), scalar);
  });
}

void _foreach_mul_(at::TensorList self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  // clip_grad_norm_ scales the gradients by a 0-dim tensor on their device.
  rt::ForeachLists lists({self});
  at::Tensor factor = lists.scalar_tensor(other);
  if (!lists.fast()) {
    return at::native::foreach_tensor_mul_tensor_kernel_slow_(self, other);
  }
  lists.launch("_foreach_mul_.Tensor", [factor = std::move(factor)](rt::ForeachLists& l) {
    at::native::foreach_tensor_mul_tensor_kernel_slow_(l.host(0), factor);
  });
}

}  // namespace foo
