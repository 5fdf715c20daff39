// Kernels of the custom op(s) foo::mymuladd for the foo backend: CPU and device.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when the schema changes and keeps every line you write.
#include "CustomOps.h"

#include <c10/util/Exception.h>

#include <ATen/ops/empty.h>
#include "device.h"
#include "kernel_support.h"

namespace foo::custom_ops {

namespace {

// What both kernels share: a * b + c for float32 tensors of one shape (no broadcasting, as in
// PyTorch's custom op tutorial this op comes from).
void check_operands(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "foo::mymuladd: a and b must have the same shape, got ",
              a.sizes(), " and ", b.sizes());
  TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
              "foo::mymuladd: a and b must be float32, got ", a.scalar_type(), " and ",
              b.scalar_type());
}

// The computation on CPU tensors: the CPU kernel's operands, or host views of device memory.
// `result` is freshly allocated, hence contiguous.
void muladd_on_host(const at::Tensor& a, const at::Tensor& b, double c, const at::Tensor& result) {
  const at::Tensor a_contiguous = a.contiguous();
  const at::Tensor b_contiguous = b.contiguous();
  const float* a_data = a_contiguous.const_data_ptr<float>();
  const float* b_data = b_contiguous.const_data_ptr<float>();
  float* result_data = result.mutable_data_ptr<float>();
  const auto addend = static_cast<float>(c);
  for (int64_t i = 0; i < result.numel(); ++i) {
    result_data[i] = a_data[i] * b_data[i] + addend;
  }
}

}  // namespace

at::Tensor mymuladd_cpu(const at::Tensor & a, const at::Tensor & b, double c) {
  check_operands(a, b);
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(),
              "foo::mymuladd: a and b must be on one device, got ", a.device(), " and ", b.device());
  at::Tensor result = at::empty(a.sizes(), a.options());
  muladd_on_host(a, b, c, result);
  return result;
}

at::Tensor mymuladd_foo(const at::Tensor & a, const at::Tensor & b, double c) {
  check_operands(a, b);
  namespace rt = scaffold::runtime;
  // Checks that b is on a's device and gives host views of device memory, the only way a
  // kernel may touch it (the simulated device's memory is protected otherwise).
  const rt::KernelCall call("foo::mymuladd", a, "a");
  // A device kernel runs on the current device, as a real one launches on the current device's
  // stream. The generated registration makes a's device current (its device guard); checked
  // here, so a call on foo:1 from a thread whose current device is foo:0 proves it.
  TORCH_CHECK(call.device().index() == rt::current_device(), "foo::mymuladd: the kernel for ",
              call.device(), " runs while foo:", static_cast<int>(rt::current_device()),
              " is the current device (no device guard?)");
  const at::Tensor a_host = call.input(a, "a");
  const at::Tensor b_host = call.input(b, "b");
  at::Tensor result = at::empty(a.sizes(), a.options());  // device memory, through the dispatcher
  muladd_on_host(a_host, b_host, c, call.inplace(result, "result"));
  return result;
}

}  // namespace foo::custom_ops
