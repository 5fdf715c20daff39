// Kernels of aten::_softmax_backward_data for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/_softmax_backward_data.h"

#include <c10/util/Exception.h>

#include <ATen/ops/_softmax_backward_data_cpu_dispatch.h>
#include <ATen/ops/_softmax_backward_data_native.h>
#include <ATen/ops/empty.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & _softmax_backward_data_out(const at::Tensor & grad_output, const at::Tensor & output, int64_t dim, at::ScalarType input_dtype, at::Tensor & grad_input) {
  namespace rt = scaffold::runtime;
  const rt::KernelCall call("_softmax_backward_data.out", grad_input, "grad_input");
  rt::OutputView o = call.output(grad_input, "grad_input");
  at::cpu::_softmax_backward_data_out(o.host(), call.input(grad_output, "grad_output"), call.input(output, "output"), dim, input_dtype);
  return o.commit();
}

at::Tensor _softmax_backward_data(const at::Tensor & grad_output, const at::Tensor & output, int64_t dim, at::ScalarType input_dtype) {
  namespace rt = scaffold::runtime;
  rt::StructuredFunctional<at::native::structured_softmax_backward_cpu_out> op({grad_output, output});
  if (op.native()) {
    op.meta(op.input(0), op.input(1), dim, input_dtype);
    return op.launch("_softmax_backward_data", [dim, input_dtype](auto& op) { op.impl(op.input(0), op.input(1), dim, input_dtype, op.output()); });
  }
  // Other operands (a CPU tensor, another device or layout): the out= kernel raises PyTorch's error.
  at::Tensor result = at::empty({0}, grad_output.options().dtype(input_dtype));
  return _softmax_backward_data_out(grad_output, output, dim, input_dtype, result);
}

}  // namespace foo
