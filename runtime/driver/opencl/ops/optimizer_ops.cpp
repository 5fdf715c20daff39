// torch.optim.SGD(..., fused=True) in OpenCL C: weight decay, momentum
// (dampening, Nesterov), maximize and AMP's grad scaling in one pass over
// each parameter, as ATen's fused kernels compute them.
#include "opencl_ops.h"

#include <string>

#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "opencl_launch.h"

namespace scaffold::opencl_ops {

namespace {

constexpr const char* kSgdSource = R"CLC(
__kernel void sgd(__global char* p_base, ulong p_offset, __global char* g_base, ulong g_offset,
                  __global char* m_base, ulong m_offset, __global const char* scale_base, ulong scale_offset,
                  __global const char* inf_base, ulong inf_offset, long n,
                  ACC_T weight_decay, ACC_T momentum, ACC_T lr, ACC_T dampening, int is_first_step) {
  long i = get_global_id(0);
  if (i >= n) return;
#if HAS_FOUND_INF
  // A step whose gradients overflowed (AMP) leaves everything as it was.
  if (*(__global const float*)(inf_base + inf_offset) == 1.0f) return;
#endif
  __global P_T* p = (__global P_T*)(p_base + p_offset) + i;
  __global P_T* g = (__global P_T*)(g_base + g_offset) + i;
  ACC_T param = LOAD_P(p);
  ACC_T grad = LOAD_P(g);
#if HAS_GRAD_SCALE
  grad = grad / (ACC_T)(*(__global const float*)(scale_base + scale_offset));
  STORE_P(g, grad);
#endif
#if MAXIMIZE
  grad = -grad;
#endif
  if (weight_decay != 0) grad += weight_decay * param;
#if HAS_MOMENTUM
  __global P_T* m = (__global P_T*)(m_base + m_offset) + i;
  ACC_T buffer = is_first_step ? grad : momentum * LOAD_P(m) + (1 - dampening) * grad;
  STORE_P(m, buffer);
#if NESTEROV
  grad = grad + momentum * buffer;
#else
  grad = buffer;
#endif
#endif
  STORE_P(p, param - lr * grad);
}
)CLC";

constexpr const char* kOp = "_fused_sgd_";

void check_tensor(const at::Tensor& t, const at::Tensor& param, const char* what) {
  TORCH_CHECK(t.device() == param.device(), kOp, ": ", what, " must be on the parameter's device");
  TORCH_CHECK(t.sizes() == param.sizes(), kOp, ": ", what, " must have the parameter's shape");
  if (t.scalar_type() != param.scalar_type() || !t.is_contiguous()) {
    runtime::decline_kernel(kOp, std::string(what) + " of another dtype or not contiguous");
  }
}

} // namespace

void _fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list,
                 double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize,
                 bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                 const std::optional<at::Tensor>& found_inf) {
  const bool has_momentum = momentum != 0.0;
  TORCH_CHECK(self.size() == grads.size(), kOp, ": expected as many gradients as parameters");
  TORCH_CHECK(
      !has_momentum || momentum_buffer_list.size() == self.size(), kOp,
      ": expected a momentum buffer for every parameter");
  for (const std::optional<at::Tensor>* scalar : {&grad_scale, &found_inf}) {
    if (scalar->has_value() && (*scalar)->scalar_type() != at::kFloat) {
      runtime::decline_kernel(kOp, "grad_scale or found_inf not float32");
    }
  }
  // Everything is checked before the first launch: a decline must come before any write.
  for (size_t i = 0; i < self.size(); ++i) {
    const at::Tensor& param = self[i];
    if (!at::isFloatingType(param.scalar_type()) || !param.is_contiguous()) {
      runtime::decline_kernel(kOp, "a parameter that is not a contiguous floating-point tensor");
    }
    check_dtype(kOp, param.scalar_type(), param.device().index());
    check_tensor(grads[i], param, "a gradient");
    if (has_momentum) {
      check_tensor(momentum_buffer_list[i], param, "a momentum buffer");
    }
  }
  for (size_t i = 0; i < self.size(); ++i) {
    const at::Tensor& param = self[i];
    const c10::DeviceIndex device = param.device().index();
    const at::ScalarType accumulate = compute_type(param.scalar_type());
    const char* acc = compute_type_name(accumulate);
    std::string source = program_prelude(device);
    source += std::string("#define ACC_T ") + acc + "\n";
    source += element_macros("P", param.scalar_type(), acc);
    source += std::string("#define HAS_FOUND_INF ") + (found_inf.has_value() ? "1" : "0") + "\n";
    source += std::string("#define HAS_GRAD_SCALE ") + (grad_scale.has_value() ? "1" : "0") + "\n";
    source += std::string("#define MAXIMIZE ") + (maximize ? "1" : "0") + "\n";
    source += std::string("#define HAS_MOMENTUM ") + (has_momentum ? "1" : "0") + "\n";
    source += std::string("#define NESTEROV ") + (nesterov ? "1" : "0") + "\n";
    source += kSgdSource;
    Launch(device, source, "sgd")
        .tensor(param)
        .tensor(grads[i])
        .tensor(has_momentum ? momentum_buffer_list[i] : at::Tensor())
        .tensor(grad_scale.value_or(at::Tensor()))
        .tensor(found_inf.value_or(at::Tensor()))
        .i64(param.numel())
        .scalar(weight_decay, accumulate)
        .scalar(momentum, accumulate)
        .scalar(lr, accumulate)
        .scalar(dampening, accumulate)
        .i32(is_first_step ? 1 : 0)
        .run(param.numel());
  }
}

} // namespace scaffold::opencl_ops
