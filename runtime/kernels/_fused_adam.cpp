// Kernels of aten::_fused_adam for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_fused_adam.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_fused_adam_cpu_dispatch.h>
#include "foreach_ops.h"
#include "kernel_support.h"
#include "memory_access.h"

namespace foo {

// The CPU's fused kernels on host views of the lists, launched once for the whole step. They
// check little (foreach_ops.h: check_fused_adam_lists), so foo checks first, on the caller.

void _fused_adam_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize, const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf) {
  namespace rt = scaffold::runtime;
  if (self.empty()) {
    return;
  }
  const c10::Device device = rt::check_fused_adam_lists("_fused_adam_", self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, grad_scale, found_inf);
  rt::launch(device.index(), "_fused_adam_",
      [params = rt::launch_host_views(self), grads = rt::launch_host_views(grads), exp_avgs = rt::launch_host_views(exp_avgs), exp_avg_sqs = rt::launch_host_views(exp_avg_sqs),
       max_exp_avg_sqs = rt::launch_host_views(max_exp_avg_sqs), state_steps = rt::launch_host_views(state_steps), lr, beta1, beta2, weight_decay, eps, amsgrad,
       maximize, grad_scale = rt::launch_host_view(grad_scale), found_inf = rt::launch_host_view(found_inf)]() {
        at::cpu::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, eps, amsgrad,
                          maximize, grad_scale, found_inf);
      });
}

void _fused_adam_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, const at::Tensor & lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize, const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf) {
  namespace rt = scaffold::runtime;
  if (self.empty()) {
    return;
  }
  const c10::Device device = rt::check_fused_adam_lists("_fused_adam_.tensor_lr", self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, grad_scale, found_inf);
  TORCH_CHECK(lr.numel() == 1 && (lr.device() == device || lr.is_cpu()), "_fused_adam_.tensor_lr: expected lr to be a tensor with one element on ", device, " or the CPU, got one of sizes ", lr.sizes(), " on ", lr.device());
  if (lr.is_cpu()) {
    return foo::_fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr.item<double>(), beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
  }
  rt::launch(device.index(), "_fused_adam_.tensor_lr",
      [params = rt::launch_host_views(self), grads = rt::launch_host_views(grads), exp_avgs = rt::launch_host_views(exp_avgs), exp_avg_sqs = rt::launch_host_views(exp_avg_sqs),
       max_exp_avg_sqs = rt::launch_host_views(max_exp_avg_sqs), state_steps = rt::launch_host_views(state_steps), lr = rt::launch_host_view(lr), beta1, beta2,
       weight_decay, eps, amsgrad, maximize, grad_scale = rt::launch_host_view(grad_scale), found_inf = rt::launch_host_view(found_inf)]() {
        at::cpu::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, eps, amsgrad,
                          maximize, grad_scale, found_inf);
      });
}

}  // namespace foo
