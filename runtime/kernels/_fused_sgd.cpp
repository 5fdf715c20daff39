// Kernels of aten::_fused_sgd for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_fused_sgd.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_fused_sgd_cpu_dispatch.h>
#include "foreach_ops.h"
#include "kernel_support.h"
#include "memory_access.h"

namespace foo {

// The CPU's fused kernels on host views of the lists, launched once for the whole step. They
// check little (foreach_ops.h: check_fused_optimizer_lists), so foo checks first, on the caller.

namespace {

c10::Device check_sgd_lists(const char* op, at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double momentum,
                            const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(momentum != 0.0 || momentum_buffer_list.empty(), op, ": momentum_buffer_list must be empty without momentum, got ", momentum_buffer_list.size(), " tensors");
  const c10::Device device = momentum != 0.0
      ? rt::check_fused_optimizer_lists(op, {{self, "params"}, {grads, "grads", /*contiguous=*/false}, {momentum_buffer_list, "momentum_buffer_list"}}, std::nullopt)
      : rt::check_fused_optimizer_lists(op, {{self, "params"}, {grads, "grads", /*contiguous=*/false}}, std::nullopt);
  rt::check_fused_optimizer_scale(op, grad_scale, "grad_scale", device);
  rt::check_fused_optimizer_scale(op, found_inf, "found_inf", device);
  return device;
}

}  // namespace

void _fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step, const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf) {
  namespace rt = scaffold::runtime;
  if (self.empty()) {
    return;
  }
  const c10::Device device = check_sgd_lists("_fused_sgd_", self, grads, momentum_buffer_list, momentum, grad_scale, found_inf);
  rt::launch(device.index(), "_fused_sgd_",
      [params = rt::launch_host_views(self), grads = rt::launch_host_views(grads), buffers = rt::launch_host_views(momentum_buffer_list), weight_decay, momentum, lr, dampening,
       nesterov, maximize, is_first_step, grad_scale = rt::launch_host_view(grad_scale), found_inf = rt::launch_host_view(found_inf)]() {
        at::cpu::_fused_sgd_(params, grads, buffers, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
      });
}

void _fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay, double momentum, const at::Tensor & lr, double dampening, bool nesterov, bool maximize, bool is_first_step, const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf) {
  namespace rt = scaffold::runtime;
  if (self.empty()) {
    return;
  }
  const c10::Device device = check_sgd_lists("_fused_sgd_.tensor_lr", self, grads, momentum_buffer_list, momentum, grad_scale, found_inf);
  TORCH_CHECK(lr.numel() == 1 && (lr.device() == device || lr.is_cpu()), "_fused_sgd_.tensor_lr: expected lr to be a tensor with one element on ", device, " or the CPU, got one of sizes ", lr.sizes(), " on ", lr.device());
  if (lr.is_cpu()) {
    return foo::_fused_sgd_(self, grads, momentum_buffer_list, weight_decay, momentum, lr.item<double>(), dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
  }
  rt::launch(device.index(), "_fused_sgd_.tensor_lr",
      [params = rt::launch_host_views(self), grads = rt::launch_host_views(grads), buffers = rt::launch_host_views(momentum_buffer_list), weight_decay, momentum,
       lr = rt::launch_host_view(lr), dampening, nesterov, maximize, is_first_step, grad_scale = rt::launch_host_view(grad_scale), found_inf = rt::launch_host_view(found_inf)]() {
        at::cpu::_fused_sgd_(params, grads, buffers, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
      });
}

}  // namespace foo
