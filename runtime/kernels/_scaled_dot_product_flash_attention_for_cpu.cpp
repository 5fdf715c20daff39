// Kernels of aten::_scaled_dot_product_flash_attention_for_cpu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_scaled_dot_product_flash_attention_for_cpu.h"

#include <c10/util/Exception.h>

#include <utility>

#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor> _scaled_dot_product_flash_attention_for_cpu(const at::Tensor & query, const at::Tensor & key, const at::Tensor & value, double dropout_p, bool is_causal, const ::std::optional<at::Tensor> & attn_mask, ::std::optional<double> scale) {
  namespace rt = scaffold::runtime;
  // The CPU kernel reads garbage when a head's elements are not adjacent (scaled_dot_product_attention
  // never sends it such inputs; a direct call can). CUDA's flash attention raises: so does foo.
  for (const auto& [t, name] : {std::pair{&query, "query"}, {&key, "key"}, {&value, "value"}}) {
    TORCH_CHECK(t->stride(-1) == 1 || t->size(-1) == 1, "_scaled_dot_product_flash_attention_for_cpu: ", name,
                " must have a contiguous last dimension (stride 1), got stride ", t->stride(-1));
  }
  // Inline: the CPU kernel allocates its results (the output and the log-sum-exp its backward
  // reads), which are copied to the device.
  const rt::KernelCall call("_scaled_dot_product_flash_attention_for_cpu", query, "query");
  auto [output, logsumexp] = at::cpu::_scaled_dot_product_flash_attention_for_cpu(
      call.device_input(query, "query"), call.device_input(key, "key"), call.device_input(value, "value"), dropout_p,
      is_causal, call.device_input(attn_mask, "attn_mask"), scale);
  return {call.adopt(output), call.adopt(logsumexp)};
}

}  // namespace foo
