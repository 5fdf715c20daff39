// Kernels of aten::_index_put_impl for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_index_put_impl.h"

#include <c10/util/Exception.h>

#include <ATen/MemoryOverlap.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/_index_put_impl_cpu_dispatch.h>
#include "advanced_indexing.h"
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & _index_put_impl_(at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices, const at::Tensor & values, bool accumulate, bool unsafe) {
  namespace rt = scaffold::runtime;
  // Launched when the indexed shape follows from the metadata and values fit it (the gradient of
  // x[index] on autograd's thread, which would otherwise wait there for the whole forward pass):
  // an index out of range is then reported at the next synchronisation, as CUDA's device-side
  // assert is. Anything else runs inline, where the CPU kernel raises its own errors at the call;
  // index tensors may be CPU tensors there, as for CUDA tensors.
  const std::vector<at::Tensor> operands = rt::indexing_operands(self, values, indices);
  rt::HostKernelLaunch launch(operands);
  if (launch.native() && values.scalar_type() == self.scalar_type() && at::has_internal_overlap(self) != at::MemOverlap::Yes) {
    const std::optional<c10::DimVector> indexed = rt::index_result_sizes(self, indices);
    if (indexed.has_value() && at::is_expandable_to(values.sizes(), *indexed)) {
      launch.run("_index_put_impl_", [count = indices.size(), accumulate, unsafe](const rt::HostViews& in) {
        at::Tensor target = in[0];
        at::cpu::_index_put_impl_(target, rt::index_list(in, 2, count), in[1], accumulate, unsafe);
        return std::make_tuple();
      });
      return self;
    }
  }
  const rt::KernelCall call("_index_put_impl_", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::_index_put_impl_(host, call.indices(indices, "indices"), call.input(values, "values"), accumulate, unsafe);
  return self;
}

}  // namespace foo
