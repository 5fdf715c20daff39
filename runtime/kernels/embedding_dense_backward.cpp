// Kernels of aten::embedding_dense_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/embedding_dense_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/embedding_dense_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor embedding_dense_backward(const at::Tensor & grad_output, const at::Tensor & indices, int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  namespace rt = scaffold::runtime;
  // The CPU kernel checks the indices' dtype, but trusts grad_output to hold one row per index.
  TORCH_CHECK(grad_output.dim() >= 1 && grad_output.numel() == indices.numel() * grad_output.size(-1),
              "embedding_dense_backward: expected grad_output of sizes indices.sizes() + [embedding_dim], got ", grad_output.sizes(), " for indices of sizes ", indices.sizes());
  TORCH_CHECK(num_weights >= 0, "embedding_dense_backward: num_weights must be non-negative, got ", num_weights);
  // Inline: the CPU kernel allocates the gradient (zeros, then one row added per index), copied
  // to the device. An index out of range raises here, at the call.
  const rt::KernelCall call("embedding_dense_backward", grad_output, "grad_output");
  return call.adopt(at::cpu::embedding_dense_backward(call.device_input(grad_output, "grad_output"), call.device_input(indices, "indices"),
                                                      num_weights, padding_idx, scale_grad_by_freq));
}

}  // namespace foo
