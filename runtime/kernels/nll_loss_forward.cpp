// Kernels of aten::nll_loss_forward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_forward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/nll_loss_forward_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

::std::tuple<at::Tensor &,at::Tensor &> nll_loss_forward_out(const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, at::Tensor & output, at::Tensor & total_weight) {
  namespace rt = scaffold::runtime;
  // Launched on the stream without class weights (cross_entropy's usual call) when the arguments
  // pass every check the CPU kernel makes before reading data, and the outputs have the shapes
  // PyTorch's functional form gives them: run inline, a classifier's loss would wait for its
  // whole forward. A target out of range is then an error of the launched work, reported at the
  // next synchronisation, as CUDA reports it.
  const bool batched = self.dim() == 2;
  const auto expected_output = reduction == at::Reduction::None && batched ? at::IntArrayRef(self.sizes().data(), 1)
                                                                           : at::IntArrayRef();
  const bool fits = (!weight.has_value() || !weight->defined()) && (self.dim() == 1 || batched) &&
      at::isFloatingType(self.scalar_type()) && target.scalar_type() == at::kLong && target.dim() == self.dim() - 1 &&
      (!batched || target.size(0) == self.size(0)) && output.sizes() == expected_output && output.is_contiguous() &&
      total_weight.dim() == 0 && output.scalar_type() == self.scalar_type() &&
      total_weight.scalar_type() == self.scalar_type();
  if (fits) {
    rt::HostKernelLaunch launch({self, target, output, total_weight}); // writes the last two
    if (launch.native()) {
      launch.run("nll_loss_forward.output", [reduction, ignore_index](const rt::HostViews& in) {
        at::Tensor host_output = in[2], host_total_weight = in[3];
        at::cpu::nll_loss_forward_out(host_output, host_total_weight, in[0], in[1], {}, reduction, ignore_index);
        return std::make_tuple();
      });
      return {output, total_weight};
    }
  }
  const rt::KernelCall call("nll_loss_forward.output", output, "output");
  rt::OutputView loss = call.output(output, "output");
  rt::OutputView weight_sum = call.output(total_weight, "total_weight");
  at::cpu::nll_loss_forward_out(loss.host(), weight_sum.host(), call.input(self, "self"), call.input(target, "target"), call.input(weight, "weight"), reduction, ignore_index);
  return {loss.commit(), weight_sum.commit()};
}

}  // namespace foo
