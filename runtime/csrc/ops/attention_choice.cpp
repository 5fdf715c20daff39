// Which kernel torch.nn.functional.scaled_dot_product_attention uses on the
// device. ATen asks each device type through _fused_sdp_choice_stub; a device
// that registers no answer gets the math composition (a dozen ops forward and
// more backward, each a launch). This answers as the CPU does -- its flash
// attention wherever the CPU would use it (no dropout, supported shapes and
// dtypes) -- when the backend has kernels for the CPU's flash attention
// (aten::_scaled_dot_product_flash_attention_for_cpu and its backward, which
// the simulated device runs on host views), and the math composition
// otherwise, so a project without those kernels behaves as before.
//
// A device with a fused attention of its own answers `overrideable` here and
// implements aten::_scaled_dot_product_fused_attention_overrideable instead.
#include <ATen/SDPBackend.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_native.h>

namespace scaffold::runtime {
namespace {

bool has_device_kernel(const char* op) {
  const auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
  return handle.has_value() && handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1);
}

bool has_flash_attention_kernels() {
  // Asked once, at the first attention: every registration has run by then.
  static const bool present = has_device_kernel("aten::_scaled_dot_product_flash_attention_for_cpu") &&
      has_device_kernel("aten::_scaled_dot_product_flash_attention_for_cpu_backward");
  return present;
}

int64_t choose_attention_kernel(
    const at::Tensor& query,
    const at::Tensor& key,
    const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale,
    bool enable_gqa) {
  const auto math = static_cast<int64_t>(at::SDPBackend::math);
  if (!has_flash_attention_kernels()) {
    return math;
  }
  const int64_t cpu_choice =
      at::native::_fused_sdp_choice_cpp(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
  return cpu_choice == static_cast<int64_t>(at::SDPBackend::flash_attention) ? cpu_choice : math;
}

} // namespace
} // namespace scaffold::runtime

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &scaffold::runtime::choose_attention_kernel)
} // namespace at::native
