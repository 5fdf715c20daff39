// Kernels of aten::index for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & index_out(const at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::index.Tensor_out has no kernel yet (implement index_out in kernels/index.cpp)");
}

}  // namespace foo
