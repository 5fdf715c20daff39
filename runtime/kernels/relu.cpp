// Kernels of aten::relu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/relu.h"

#include <c10/util/Exception.h>

#include <ATen/ops/clamp_min_cpu_dispatch.h>
#include <ATen/ops/clamp_min_native.h>
#include <ATen/ops/empty_like.h>
#include "kernel_support.h"

namespace foo {

at::Tensor relu(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(self.scalar_type() != at::kBool, "relu: boolean inputs are not supported");
  // ATen's relu is clamp_min(self, 0).
  rt::StructuredFunctional<at::native::structured_clamp_min_out> op({self});
  if (op.native()) {
    op.meta(op.input(0), 0);
    return op.launch("relu", [](auto& op) { op.impl(op.input(0), 0, op.output()); });
  }
  const rt::KernelCall call("relu", self, "self");
  at::Tensor result = at::empty_like(self);
  rt::OutputView o = call.output(result, "result");
  at::cpu::clamp_min_out(o.host(), call.input(self, "self"), 0);
  return o.commit();
}

at::Tensor & relu_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(self.scalar_type() != at::kBool, "relu_: boolean inputs are not supported");
  rt::StructuredInplace<at::native::structured_clamp_min_out> op(self, {});
  if (op.native()) {
    op.meta(op.self(), 0);
    op.launch("relu_", [](auto& op) { op.impl(op.self(), 0, op.self()); });
    return self;
  }
  const rt::KernelCall call("relu_", self, "self"); // raises the device error
  at::Tensor host = call.inplace(self);
  at::cpu::clamp_min_(host, 0);
  return self;
}

}  // namespace foo
