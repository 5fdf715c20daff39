// Kernels of aten::masked_fill for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/masked_fill.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & masked_fill_(at::Tensor & self, const at::Tensor & mask, const at::Scalar & value) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::masked_fill_.Scalar has no kernel yet (implement masked_fill_ in kernels/masked_fill.cpp)");
}

}  // namespace foo
