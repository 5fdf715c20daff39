// Kernels of aten::native_batch_norm for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/native_batch_norm.h"

#include <array>

#include <c10/util/Exception.h>

#include <ATen/ops/native_batch_norm_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor,at::Tensor,at::Tensor> native_batch_norm(const at::Tensor & input, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, const ::std::optional<at::Tensor> & running_mean, const ::std::optional<at::Tensor> & running_var, bool training, double momentum, double eps) {
  namespace rt = scaffold::runtime;
  // F.batch_norm checks these before it reaches here; the CPU kernel itself does not (it reads C
  // elements of every per-channel tensor), and other callers (torch.func, decompositions) skip them.
  TORCH_CHECK(input.dim() >= 2, "native_batch_norm: expected an input with a batch and a channel dimension, got ", input.dim(), " dimension(s)");
  const int64_t channels = input.size(1);
  const std::pair<const ::std::optional<at::Tensor>*, const char*> per_channel[] = {
      {&weight, "weight"}, {&bias, "bias"}, {&running_mean, "running_mean"}, {&running_var, "running_var"}};
  for (const auto& [t, name] : per_channel) {
    TORCH_CHECK(!t->has_value() || !(*t)->defined() || (*t)->numel() == channels,
                "native_batch_norm: ", name, " should contain ", channels, " elements not ", (*t)->numel());
  }
  const bool has_running_stats = running_mean.has_value() && running_mean->defined() && running_var.has_value() && running_var->defined();
  TORCH_CHECK(training || has_running_stats, "native_batch_norm: running_mean and running_var must be defined in evaluation mode");
  // Launched when every tensor has input's dtype: the CPU kernel's results are then the input's
  // sizes in its memory format, and a statistic per channel in training (none in evaluation).
  // In training it updates the running statistics in place, through their host views.
  const auto same_dtype = [&](const ::std::optional<at::Tensor>& t) {
    return !t.has_value() || !t->defined() || t->scalar_type() == input.scalar_type();
  };
  if (at::isFloatingType(input.scalar_type()) && same_dtype(weight) && same_dtype(bias) && same_dtype(running_mean) &&
      same_dtype(running_var)) {
    rt::HostKernelLaunch launch({input, weight.value_or(at::Tensor()), bias.value_or(at::Tensor()),
                                 running_mean.value_or(at::Tensor()), running_var.value_or(at::Tensor())});
    if (launch.native()) {
      const std::array<int64_t, 1> stat_sizes{training ? channels : 0};
      at::Tensor output = launch.result(input.sizes(), input.scalar_type(), input.suggest_memory_format());
      at::Tensor save_mean = launch.result(stat_sizes, input.scalar_type());
      at::Tensor save_invstd = launch.result(stat_sizes, input.scalar_type());
      launch.run("native_batch_norm", [training, momentum, eps](const rt::HostViews& in) {
        return at::cpu::native_batch_norm(in[0], in[1], in[2], in[3], in[4], training, momentum, eps);
      });
      return {output, save_mean, save_invstd};
    }
  }
  // Inline: the CPU kernel allocates its results (copied to the device below) and, in training,
  // updates the running statistics in place through their host views.
  const rt::KernelCall call("native_batch_norm", input, "input");
  auto [output, save_mean, save_invstd] = at::cpu::native_batch_norm(
      call.device_input(input, "input"), call.device_input(weight, "weight"), call.device_input(bias, "bias"),
      call.device_input(running_mean, "running_mean"), call.device_input(running_var, "running_var"), training, momentum, eps);
  return {call.adopt(output), call.adopt(save_mean), call.adopt(save_invstd)};
}

}  // namespace foo
