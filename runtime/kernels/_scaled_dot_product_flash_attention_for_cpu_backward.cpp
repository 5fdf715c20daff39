// Kernels of aten::_scaled_dot_product_flash_attention_for_cpu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_scaled_dot_product_flash_attention_for_cpu_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward_cpu_dispatch.h>
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(const at::Tensor & grad_out, const at::Tensor & query, const at::Tensor & key, const at::Tensor & value, const at::Tensor & out, const at::Tensor & logsumexp, double dropout_p, bool is_causal, const ::std::optional<at::Tensor> & attn_mask, ::std::optional<double> scale) {
  namespace rt = scaffold::runtime;
  // Inline, as the forward: the CPU kernel allocates the three gradients.
  const rt::KernelCall call("_scaled_dot_product_flash_attention_for_cpu_backward", query, "query");
  auto [grad_query, grad_key, grad_value] = at::cpu::_scaled_dot_product_flash_attention_for_cpu_backward(
      call.device_input(grad_out, "grad_out"), call.device_input(query, "query"), call.device_input(key, "key"),
      call.device_input(value, "value"), call.device_input(out, "out"), call.device_input(logsumexp, "logsumexp"),
      dropout_p, is_causal, call.device_input(attn_mask, "attn_mask"), scale);
  return {call.adopt(grad_query), call.adopt(grad_key), call.adopt(grad_value)};
}

}  // namespace foo
