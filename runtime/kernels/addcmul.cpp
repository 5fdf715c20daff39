// Kernels of aten::addcmul for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/addcmul.h"

#include <c10/util/Exception.h>

#include <ATen/ops/addcmul_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/addcmul_cpu_dispatch.h>
#include <ATen/ops/addcmul_native.h>
#include "kernel_support.h"

namespace foo {

// Structured TensorIterator ops, as add: the functional and in-place forms run ATen's meta() on
// the caller and launch impl(); optimizers call addcmul_ once per parameter and step.

at::Tensor addcmul(const at::Tensor & self, const at::Tensor & tensor1, const at::Tensor & tensor2, const at::Scalar & value) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_addcmul_out> op({self, tensor1, tensor2});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::addcmul(self, tensor1, tensor2, value);
  }
  op.meta(op.input(0), op.input(1), op.input(2), value);
  return op.launch("addcmul", [value](auto& op) { op.impl(op.input(0), op.input(1), op.input(2), value, op.output()); });
}

at::Tensor & addcmul_out(const at::Tensor & self, const at::Tensor & tensor1, const at::Tensor & tensor2, const at::Scalar & value, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_addcmul_out> op(out, {self, tensor1, tensor2});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), op.input(2), value);
    if (op.fits()) {
      op.launch("addcmul.out", [value](auto& op) { op.impl(op.input(0), op.input(1), op.input(2), value, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("addcmul.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::addcmul_out(o.host(), call.input(self, "self"), call.input(tensor1, "tensor1"), call.input(tensor2, "tensor2"), value);
  return o.commit();
}

at::Tensor & addcmul_(at::Tensor & self, const at::Tensor & tensor1, const at::Tensor & tensor2, const at::Scalar & value) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_addcmul_out> op(self, {tensor1, tensor2});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::addcmul_(self, tensor1, tensor2, value);
  }
  op.meta(op.self(), op.input(0), op.input(1), value);
  op.launch("addcmul_", [value](auto& op) { op.impl(op.self(), op.input(0), op.input(1), value, op.self()); });
  return self;
}

}  // namespace foo
