// Kernels of aten::lerp for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/lerp.h"

#include <c10/util/Exception.h>

#include <ATen/ops/lerp_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/lerp_cpu_dispatch.h>
#include <ATen/ops/lerp_native.h>
#include "kernel_support.h"

namespace foo {

// Structured TensorIterator ops, as add: the functional and in-place forms run ATen's meta() on
// the caller and launch impl(); Adam calls lerp_ (its first moment) once per parameter and step.

at::Tensor lerp(const at::Tensor & self, const at::Tensor & end, const at::Scalar & weight) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_lerp_Scalar> op({self, end});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::lerp(self, end, weight);
  }
  op.meta(op.input(0), op.input(1), weight);
  return op.launch("lerp.Scalar", [weight](auto& op) { op.impl(op.input(0), op.input(1), weight, op.output()); });
}

at::Tensor & lerp_out(const at::Tensor & self, const at::Tensor & end, const at::Scalar & weight, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_lerp_Scalar> op(out, {self, end});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), weight);
    if (op.fits()) {
      op.launch("lerp.Scalar_out", [weight](auto& op) { op.impl(op.input(0), op.input(1), weight, op.output()); });
      return out;
    }
  }
  // out must be resized first, or an argument is on another device: inline.
  const rt::KernelCall call("lerp.Scalar_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::lerp_out(o.host(), call.input(self, "self"), call.input(end, "end"), weight);
  return o.commit();
}

at::Tensor lerp(const at::Tensor & self, const at::Tensor & end, const at::Tensor & weight) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_lerp_Tensor> op({self, end, weight});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::lerp(self, end, weight);
  }
  op.meta(op.input(0), op.input(1), op.input(2));
  return op.launch("lerp.Tensor", [](auto& op) { op.impl(op.input(0), op.input(1), op.input(2), op.output()); });
}

at::Tensor & lerp_out(const at::Tensor & self, const at::Tensor & end, const at::Tensor & weight, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  rt::StructuredOut<at::native::structured_lerp_Tensor> op(out, {self, end, weight});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), op.input(2));
    if (op.fits()) {
      op.launch("lerp.Tensor_out", [](auto& op) { op.impl(op.input(0), op.input(1), op.input(2), op.output()); });
      return out;
    }
  }
  const rt::KernelCall call("lerp.Tensor_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::lerp_out(o.host(), call.input(self, "self"), call.input(end, "end"), call.input(weight, "weight"));
  return o.commit();
}

at::Tensor & lerp_(at::Tensor & self, const at::Tensor & end, const at::Scalar & weight) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_lerp_Scalar> op(self, {end});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::lerp_(self, end, weight);
  }
  op.meta(op.self(), op.input(0), weight);
  op.launch("lerp_.Scalar", [weight](auto& op) { op.impl(op.self(), op.input(0), weight, op.self()); });
  return self;
}

at::Tensor & lerp_(at::Tensor & self, const at::Tensor & end, const at::Tensor & weight) {
  namespace rt = scaffold::runtime;
  rt::StructuredInplace<at::native::structured_lerp_Tensor> op(self, {end, weight});
  if (!op.native()) {
    return at::compositeexplicitautogradnonfunctional::lerp_(self, end, weight);
  }
  op.meta(op.self(), op.input(0), op.input(1));
  op.launch("lerp_.Tensor", [](auto& op) { op.impl(op.self(), op.input(0), op.input(1), op.self()); });
  return self;
}

}  // namespace foo
