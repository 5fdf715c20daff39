// Kernels of aten::_scaled_dot_product_flash_attention_for_cpu_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_scaled_dot_product_flash_attention_for_cpu_backward.h"

#include <c10/util/Exception.h>

#include <vector>

#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward_cpu_dispatch.h>
#include <ATen/OpMathType.h>
#include "flash_attention_inputs.h"
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(const at::Tensor & grad_out, const at::Tensor & query, const at::Tensor & key, const at::Tensor & value, const at::Tensor & out, const at::Tensor & logsumexp, double dropout_p, bool is_causal, const ::std::optional<at::Tensor> & attn_mask, ::std::optional<double> scale) {
  namespace rt = scaffold::runtime;
  // Launched on the stream when the inputs are what the forward gives: the gradients laid out as
  // the CPU kernel lays them out, (B, L, H, E) transposed to (B, H, L, E).
  const auto is_forward_result = [&] {
    return out.dim() == 4 && out.sizes() == query.sizes() && grad_out.sizes() == out.sizes() &&
        out.scalar_type() == query.scalar_type() && grad_out.scalar_type() == query.scalar_type() &&
        logsumexp.sizes() == out.sizes().slice(0, 3) && logsumexp.scalar_type() == at::toOpMathType(query.scalar_type());
  };
  if (rt::cpu_flash_attention_accepts(query, key, value, attn_mask, dropout_p) && is_forward_result()) {
    rt::HostKernelLaunch launch({grad_out, query, key, value, out, logsumexp, attn_mask.value_or(at::Tensor())});
    if (launch.native()) {
      const auto transposed = [](const at::Tensor& t) {
        return std::vector<int64_t>{t.size(0), t.size(2), t.size(1), t.size(3)};
      };
      at::Tensor grad_query = launch.result(transposed(query), query.scalar_type());
      at::Tensor grad_key = launch.result(transposed(key), key.scalar_type());
      at::Tensor grad_value = launch.result(transposed(value), value.scalar_type());
      launch.run("_scaled_dot_product_flash_attention_for_cpu_backward",
                 [dropout_p, is_causal, scale](const rt::HostViews& in) {
                   auto [gq, gk, gv] = at::cpu::_scaled_dot_product_flash_attention_for_cpu_backward(
                       in[0], in[1], in[2], in[3], in[4], in[5], dropout_p, is_causal,
                       in[6].defined() ? std::optional(in[6]) : std::nullopt, scale);
                   return std::make_tuple(gq.transpose(1, 2), gk.transpose(1, 2), gv.transpose(1, 2));
                 });
      return {grad_query.transpose(1, 2), grad_key.transpose(1, 2), grad_value.transpose(1, 2)};
    }
  }
  // Inline otherwise, raising the CPU kernel's errors at the call.
  const rt::KernelCall call("_scaled_dot_product_flash_attention_for_cpu_backward", query, "query");
  auto [grad_query, grad_key, grad_value] = at::cpu::_scaled_dot_product_flash_attention_for_cpu_backward(
      call.device_input(grad_out, "grad_out"), call.device_input(query, "query"), call.device_input(key, "key"),
      call.device_input(value, "value"), call.device_input(out, "out"), call.device_input(logsumexp, "logsumexp"),
      dropout_p, is_causal, call.device_input(attn_mask, "attn_mask"), scale);
  return {call.adopt(grad_query), call.adopt(grad_key), call.adopt(grad_value)};
}

}  // namespace foo
