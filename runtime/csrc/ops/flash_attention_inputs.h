// Inputs the CPU's flash attention (aten::_scaled_dot_product_flash_attention_for_cpu
// and its backward) is known to accept: a kernel that runs it on host views can
// launch it on the stream for these, knowing it cannot fail once launched, and
// run anything else inline, where the CPU kernel raises its own error at the
// call, as CUDA's flash attention does.
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

namespace scaffold::runtime {

// query (B, H, L, E), key and value (B, Hk, S, E) with H a multiple of Hk,
// one floating dtype, no dropout, no empty dimension; a mask of query's dtype,
// 2-D (L, S) or 4-D (B, H, L, S), each size 1 or the full one.
inline bool cpu_flash_attention_accepts(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask, double dropout_p) {
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4 || dropout_p != 0.0 ||
      !at::isFloatingType(query.scalar_type()) || key.scalar_type() != query.scalar_type() ||
      value.scalar_type() != query.scalar_type() || query.numel() == 0 || key.numel() == 0 || value.numel() == 0) {
    return false;
  }
  const int64_t batch = query.size(0), heads = query.size(1), length = query.size(2), head_size = query.size(3);
  const int64_t kv_heads = key.size(1), kv_length = key.size(2);
  if (key.size(0) != batch || value.size(0) != batch || value.size(1) != kv_heads || value.size(2) != kv_length ||
      key.size(3) != head_size || value.size(3) != head_size || heads % kv_heads != 0) {
    return false;
  }
  if (!attn_mask.has_value() || !attn_mask->defined()) {
    return true;
  }
  const at::Tensor& mask = *attn_mask;
  if (mask.scalar_type() != query.scalar_type() || (mask.dim() != 2 && mask.dim() != 4)) {
    return false;
  }
  const int64_t full[4] = {batch, heads, length, kv_length};
  const int64_t first = 4 - mask.dim();
  for (int64_t d = 0; d < mask.dim(); ++d) {
    if (mask.size(d) != 1 && mask.size(d) != full[first + d]) {
      return false;
    }
  }
  return true;
}

} // namespace scaffold::runtime
