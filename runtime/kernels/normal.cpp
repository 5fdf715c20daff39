// Kernels of aten::normal for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/normal.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & normal_(at::Tensor & self, double mean, double std, ::std::optional<at::Generator> generator) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::normal_ has no kernel yet (implement normal_ in kernels/normal.cpp)");
}

}  // namespace foo
