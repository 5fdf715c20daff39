// Kernels of aten::log for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/log.h"

#include <c10/util/Exception.h>

namespace foo {

at::Tensor & log_out(const at::Tensor & self, at::Tensor & out) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "foo: aten::log.out has no kernel yet (implement log_out in kernels/log.cpp)");
}

}  // namespace foo
