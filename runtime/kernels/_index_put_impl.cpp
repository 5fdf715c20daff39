// Kernels of aten::_index_put_impl for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_index_put_impl.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_index_put_impl_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & _index_put_impl_(at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices, const at::Tensor & values, bool accumulate, bool unsafe) {
  namespace rt = scaffold::runtime;
  // Inline: the CPU kernel checks the indices against self's sizes on the data, and an index out
  // of range raises here. Index tensors may be CPU tensors, as for CUDA tensors.
  const rt::KernelCall call("_index_put_impl_", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::_index_put_impl_(host, call.indices(indices, "indices"), call.input(values, "values"), accumulate, unsafe);
  return self;
}

}  // namespace foo
