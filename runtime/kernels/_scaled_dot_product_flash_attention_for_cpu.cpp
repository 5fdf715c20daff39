// Kernels of aten::_scaled_dot_product_flash_attention_for_cpu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_scaled_dot_product_flash_attention_for_cpu.h"

#include <c10/util/Exception.h>

#include <utility>

#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_cpu_dispatch.h>
#include <ATen/OpMathType.h>
#include "flash_attention_inputs.h"
#include "host_kernel_launch.h"
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
  // Launched on the stream when the CPU kernel will accept the inputs. Its results, as it lays
  // them out: the output like query, the log-sum-exp (B, L, H) transposed to (B, H, L), in the
  // computation dtype (float for half and bfloat16).
  if (rt::cpu_flash_attention_accepts(query, key, value, attn_mask, dropout_p)) {
    rt::HostKernelLaunch launch({query, key, value, attn_mask.value_or(at::Tensor())});
    if (launch.native()) {
      at::Tensor output = launch.result_like(query);
      at::Tensor logsumexp =
          launch.result({query.size(0), query.size(2), query.size(1)}, at::toOpMathType(query.scalar_type()));
      launch.run("_scaled_dot_product_flash_attention_for_cpu", [dropout_p, is_causal, scale](const rt::HostViews& in) {
        auto [host_output, host_logsumexp] = at::cpu::_scaled_dot_product_flash_attention_for_cpu(
            in[0], in[1], in[2], dropout_p, is_causal, in[3].defined() ? std::optional(in[3]) : std::nullopt, scale);
        return std::make_tuple(host_output, host_logsumexp.transpose(1, 2));
      });
      return {output, logsumexp.transpose(1, 2)};
    }
  }
  // Inline otherwise, raising the CPU kernel's errors at the call.
  const rt::KernelCall call("_scaled_dot_product_flash_attention_for_cpu", query, "query");
  auto [output, logsumexp] = at::cpu::_scaled_dot_product_flash_attention_for_cpu(
      call.device_input(query, "query"), call.device_input(key, "key"), call.device_input(value, "value"), dropout_p,
      is_causal, call.device_input(attn_mask, "attn_mask"), scale);
  return {call.adopt(output), call.adopt(logsumexp)};
}

}  // namespace foo
