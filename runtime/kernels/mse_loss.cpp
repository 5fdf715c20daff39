// Kernels of aten::mse_loss for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/mse_loss.h"

#include <c10/util/Exception.h>

#include <ATen/ops/mse_loss_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/mse_loss_cpu_dispatch.h>
#include <ATen/ops/mse_loss_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & mse_loss_out(const at::Tensor & self, const at::Tensor & target, int64_t reduction, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("mse_loss.out", out, "out");
  rt::OutputView o = call.output(out, "out");
  at::cpu::mse_loss_out(o.host(), call.input(self, "self"), call.input(target, "target"), reduction);
  return o.commit();
}

at::Tensor mse_loss(const at::Tensor & self, const at::Tensor & target, int64_t reduction) {
  namespace rt = scaffold::runtime;
  // Written out rather than left to the CompositeExplicitAutogradNonFunctional kernel, which
  // calls mse_loss.out with a 0-dim result that ATen's CPU kernel first resizes to the
  // elementwise loss, with a deprecation warning the CPU's own functional never gives.
  if (reduction == at::Reduction::None) {
    // The elementwise loss: the CPU's structured kernel, writing straight into device memory.
    rt::StructuredFunctional<at::native::structured_mse_loss_out> op({self, target});
    if (!op.native()) {
      return at::compositeexplicitautogradnonfunctional::mse_loss(self, target, reduction);
    }
    op.meta(op.input(0), op.input(1), reduction);
    return op.launch("mse_loss", [reduction](auto& op) { op.impl(op.input(0), op.input(1), reduction, op.output()); });
  }
  // A reduced loss is one number: the CPU functional on host views, its 0-dim result copied over.
  rt::FunctionalOperands operands({self, target});
  if (!operands.native()) {
    return at::compositeexplicitautogradnonfunctional::mse_loss(self, target, reduction);
  }
  operands.wait(); // run inline: the CPU functional allocates its own 0-dim result
  return operands.adopt(at::cpu::mse_loss(operands.input(0), operands.input(1), reduction));
}

}  // namespace foo
