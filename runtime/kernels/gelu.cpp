// Kernels of aten::gelu for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/gelu.h"

#include <string>

#include <c10/util/Exception.h>

#include <ATen/ops/gelu_cpu_dispatch.h>
#include <ATen/ops/gelu_native.h>
#include <ATen/ops/empty.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & gelu_out(const at::Tensor & self, c10::string_view approximate, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "gelu.out: approximate must be 'none' or 'tanh', got '", approximate, "'");
  const rt::KernelCall call("gelu.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::gelu_out(o.host(), call.input(self, "self"), approximate);
  return o.commit();
}

at::Tensor gelu(const at::Tensor & self, c10::string_view approximate) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  rt::StructuredFunctional<at::native::structured_gelu_out_cpu> op({self});
  if (op.native()) {
    op.meta(op.input(0), approximate);
    return op.launch("gelu", [approximate = std::string(approximate)](auto& op) { op.impl(op.input(0), approximate, op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, self.options());
  return gelu_out(self, approximate, result);
}

}  // namespace foo
