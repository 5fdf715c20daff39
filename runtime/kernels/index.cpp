// Kernels of aten::index for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/index.h"

#include <c10/util/Exception.h>

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/index_cpu_dispatch.h>
#include "advanced_indexing.h"
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & index_out(const at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(static_cast<int64_t>(indices.size()) <= self.dim(), "index.Tensor_out: too many indices for a tensor of dimension ", self.dim(), " (got ", indices.size(), ")");
  // Launched when out already has the shape the metadata gives (PyTorch's functional x[index]
  // allocates it so): an index out of range is reported at the next synchronisation, as CUDA's
  // device-side assert is. Boolean masks, CPU indices and outputs to resize run inline.
  const std::vector<at::Tensor> operands = rt::indexing_operands(out, self, indices);
  rt::HostKernelLaunch launch(operands);
  if (launch.native() && out.scalar_type() == self.scalar_type()) {
    const std::optional<c10::DimVector> sizes = rt::index_result_sizes(self, indices);
    if (sizes.has_value() && out.sizes() == at::IntArrayRef(*sizes)) {
      at::assert_no_internal_overlap(out); // ATen's check of an out= of the right shape
      launch.run("index.Tensor_out", [count = indices.size()](const rt::HostViews& in) {
        at::Tensor result = in[0];
        at::cpu::index_out(result, in[1], rt::index_list(in, 2, count));
        return std::make_tuple();
      });
      return out;
    }
  }
  const rt::KernelCall call("index.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::index_out(o.host(), call.input(self, "self"), call.indices(indices, "indices"));
  return o.commit();
}

}  // namespace foo
