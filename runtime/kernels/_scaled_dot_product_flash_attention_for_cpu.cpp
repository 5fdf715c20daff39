// Kernels of aten::_scaled_dot_product_flash_attention_for_cpu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_scaled_dot_product_flash_attention_for_cpu.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor> _scaled_dot_product_flash_attention_for_cpu(const at::Tensor & query, const at::Tensor & key, const at::Tensor & value, double dropout_p, bool is_causal, const ::std::optional<at::Tensor> & attn_mask, ::std::optional<double> scale) {
  namespace rt = scaffold::runtime;
  // Inline: the CPU kernel allocates its results (the output and the log-sum-exp its backward
  // reads), which are copied to the device.
  const rt::KernelCall call("_scaled_dot_product_flash_attention_for_cpu", query, "query");
  auto [output, logsumexp] = at::cpu::_scaled_dot_product_flash_attention_for_cpu(
      call.device_input(query, "query"), call.device_input(key, "key"), call.device_input(value, "value"), dropout_p,
      is_causal, call.device_input(attn_mask, "attn_mask"), scale);
  return {call.adopt(output), call.adopt(logsumexp)};
}

}  // namespace foo
