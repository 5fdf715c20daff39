// Kernels of aten::embedding_dense_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/embedding_dense_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/embedding_dense_backward_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor embedding_dense_backward(const at::Tensor & grad_output, const at::Tensor & indices, int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks the indices' dtype, but trusts grad_output to hold one row per index.
  TORCH_CHECK(grad_output.dim() >= 1 && grad_output.numel() == indices.numel() * grad_output.size(-1),
              "embedding_dense_backward: expected grad_output of sizes indices.sizes() + [embedding_dim], got ", grad_output.sizes(), " for indices of sizes ", indices.sizes());
  TORCH_CHECK(num_weights >= 0, "embedding_dense_backward: num_weights must be non-negative, got ", num_weights);
  // Launched: the CPU kernel allocates the gradient (zeros, then one row added per index) on the
  // stream's worker, copied into the device result. Like the CPU kernel, it reads the indices the
  // forward embedding checked. Indices of another dtype run inline, where the CPU kernel raises its
  // own error at the call.
  const at::ScalarType index_type = indices.scalar_type();
  if (index_type == at::kLong || index_type == at::kInt) {
    rt::HostKernelLaunch launch({grad_output, indices});
    if (launch.native()) {
      at::Tensor grad_weight = launch.result({num_weights, grad_output.size(-1)}, grad_output.scalar_type());
      launch.run("embedding_dense_backward", [num_weights, padding_idx, scale_grad_by_freq](const rt::HostViews& in) {
        return std::make_tuple(at::cpu::embedding_dense_backward(in[0], in[1], num_weights, padding_idx, scale_grad_by_freq));
      });
      return grad_weight;
    }
  }
  const rt::KernelCall call("embedding_dense_backward", grad_output, "grad_output");
  return call.adopt(at::cpu::embedding_dense_backward(call.device_input(grad_output, "grad_output"), call.device_input(indices, "indices"),
                                                      num_weights, padding_idx, scale_grad_by_freq));
}

}  // namespace foo
