// Kernels of aten::nll_loss_backward for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/nll_loss_backward.h"

#include <c10/util/Exception.h>

#include <ATen/ops/nll_loss_backward_cpu_dispatch.h>
#include <ATen/ops/nll_loss_backward_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & nll_loss_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Tensor & target, const ::std::optional<at::Tensor> & weight, int64_t reduction, int64_t ignore_index, const at::Tensor & total_weight, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  // Launched on the stream without class weights (cross_entropy's usual call) when grad_input
  // has the shape meta() gives: run inline, the first kernel of a classifier's backward would
  // wait for the forward on autograd's device thread and hold back every launch after it.
  if (!weight.has_value() || !weight->defined()) {
    rt::StructuredOut<at::native::structured_nll_loss_backward_out_cpu> op(
        grad_input, {grad_output, self, target, total_weight});
    if (op.native()) {
      op.meta(op.input(0), op.input(1), op.input(2), at::OptionalTensorRef(), reduction, ignore_index, op.input(3));
      if (op.fits()) {
        op.launch("nll_loss_backward.grad_input", [reduction, ignore_index](auto& op) {
          op.impl(op.input(0), op.input(1), op.input(2), at::OptionalTensorRef(), reduction, ignore_index, op.input(3),
                  op.output());
        });
        return grad_input;
      }
    }
  }
  const rt::KernelCall call("nll_loss_backward.grad_input", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::nll_loss_backward_out(o.host(), call.input(grad_output, "grad_output"), call.input(self, "self"), call.input(target, "target"), call.input(weight, "weight"), reduction, ignore_index, call.input(total_weight, "total_weight"));
  return o.commit();
}

}  // namespace foo
