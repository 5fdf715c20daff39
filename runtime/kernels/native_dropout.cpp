// Kernels of aten::native_dropout for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_dropout.h"

#include <c10/util/Exception.h>

#include "random_ops.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor> native_dropout(const at::Tensor & input, double p, ::std::optional<bool> train) {
  return scaffold::runtime::native_dropout(input, p, train);
}

}  // namespace foo
