// Kernels of aten::where for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/where.h"

#include <c10/util/Exception.h>

#include <ATen/ops/where_cpu_dispatch.h>
#include <ATen/ops/result_type_native.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & where_out(const at::Tensor & condition, const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(condition.scalar_type() == at::kBool || condition.scalar_type() == at::kByte, "where.self_out: expected a boolean condition, got ", condition.scalar_type());
  const rt::KernelCall call("where.self_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::where_out(o.host(), call.input(condition, "condition"), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

at::Tensor where(const at::Tensor & condition, const at::Tensor & self, const at::Tensor & other) {
  namespace rt = scaffold::runtime;
  // ATen's where has no structured kernel: the CPU one allocates an empty
  // result of the promoted dtype and lets where.self_out resize it.
  const at::ScalarType dtype = at::native::result_type(self, other);
  rt::Elementwise e({condition, self, other}, dtype);
  if (e.fast()) {
    return e.launch("where", [](rt::Elementwise& e) { at::cpu::where_out(e.out(), e.input(0), e.input(1), e.input(2)); });
  }
  if (e.native()) {
    // Other layouts: the CPU kernel decides the result's strides.
    return e.adopt(at::cpu::where(e.input(0), e.input(1), e.input(2)));
  }
  // Tensors on two devices, or a CPU tensor that is not a scalar: as ATen
  // does, on the first non-CPU operand's device, which raises the error.
  at::Tensor result = rt::allocate({0}, dtype, rt::result_device({condition, self, other}));
  const rt::KernelCall call("where.self", result, "result");
  rt::OutputView o = call.output(result, "result");
  at::cpu::where_out(o.host(), call.input(condition, "condition"), call.input(self, "self"), call.input(other, "other"));
  return o.commit();
}

}  // namespace foo
