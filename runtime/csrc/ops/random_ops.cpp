#include "random_ops.h"

#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/bernoulli_cpu_dispatch.h>
#include <ATen/ops/clone.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/normal_cpu_dispatch.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/random_cpu_dispatch.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/uniform_cpu_dispatch.h>
#include <c10/util/Exception.h>

#include "capture.h"
#include "generator.h"
#include "kernel_call.h"
#include "launch.h"
#include "memory_access.h"
#include "stream.h"

namespace scaffold::runtime {

at::Tensor& fill_random(
    const char* op,
    at::Tensor& self,
    const std::optional<at::Generator>& generator,
    const RandomDraw& draw) {
  const KernelCall call(op, self, "self");
  const c10::DeviceIndex device = call.device().index();
  if (C10_LIKELY(!capture_underway()) || !current_stream_capturing(device)) {
    at::Tensor host = call.inplace(self);
    draw(host, cpu_generator(generator, device));
    return self;
  }
  // Captured: what the eager kernel would raise, raised now, on an empty twin.
  at::Tensor twin = at::empty({0}, self.options().device(c10::kCPU));
  draw(twin, at::make_generator<at::CPUGeneratorImpl>());
  at::Tensor host = launch_host_view(self); // declines first where the host has no view
  const CapturedRandom random = capture_random_kernel(current_driver_stream(device), device_generator(generator, device));
  launch(device, op, [host = std::move(host), random, draw]() mutable { draw(host, random.generator()); });
  return self;
}

at::Tensor & bernoulli_(at::Tensor & self, double p, ::std::optional<at::Generator> generator) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return fill_random("bernoulli_.float", self, generator, [p](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::bernoulli_(host, p, cpu);
  });
}

at::Tensor & normal_(at::Tensor & self, double mean, double std, ::std::optional<at::Generator> generator) {
  TORCH_CHECK(std >= 0.0, "normal_ expects std >= 0.0, but found std ", std);
  return fill_random("normal_", self, generator, [mean, std](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::normal_(host, mean, std, cpu);
  });
}

at::Tensor & uniform_(at::Tensor & self, double from, double to, ::std::optional<at::Generator> generator) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return fill_random("uniform_", self, generator, [from, to](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::uniform_(host, from, to, cpu);
  });
}

at::Tensor & random_(at::Tensor & self, ::std::optional<at::Generator> generator) {
  return fill_random("random_", self, generator, [](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::random_(host, cpu);
  });
}

at::Tensor & random_(at::Tensor & self, int64_t from, ::std::optional<int64_t> to, ::std::optional<at::Generator> generator) {
  return fill_random("random_.from", self, generator, [from, to](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::random_(host, from, to, cpu);
  });
}

at::Tensor & random_(at::Tensor & self, int64_t to, ::std::optional<at::Generator> generator) {
  return fill_random("random_.to", self, generator, [to](at::Tensor& host, const at::Generator& cpu) {
    at::cpu::random_(host, to, cpu);
  });
}

::std::tuple<at::Tensor,at::Tensor> native_dropout(const at::Tensor & input, double p, ::std::optional<bool> train) {
  const KernelCall call("native_dropout", input, "input");
  if (input.numel() == 0) {
    return {input, at::empty_like(input)}; // as the CPU's: a "mask" of input's dtype
  }
  if (train.has_value() && !*train) {
    return {at::clone(input), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  const double keep = 1. - p;
  const double scale = keep == 0 ? 0. : 1. / keep;
  // The CPU draws a bool mask and multiplies by it; drawn in the input's
  // dtype the numbers are the same (bernoulli_ draws per element whatever
  // the dtype), and the product needs no type promotion, which would read
  // the mask on the host and so could not be captured.
  at::Tensor kept = at::empty_like(input);
  bernoulli_(kept, keep, std::nullopt);
  at::Tensor output = at::mul(input, kept);
  // The CPU's kernel scales by the scale in the input's dtype (bfloat16's
  // results differ otherwise): a wrapped scalar of that dtype, for
  // mul_.Tensor, which is launched (mul_.Scalar's composite runs mul.out
  // inline).
  at::Tensor scale_operand = at::scalar_tensor(scale, at::TensorOptions().dtype(input.scalar_type()));
  scale_operand.unsafeGetTensorImpl()->set_wrapped_number(true);
  output.mul_(scale_operand);
  at::Tensor mask = kept.to(at::kBool);
  return {output, mask};
}

at::Tensor native_dropout_backward(const at::Tensor & grad_output, const at::Tensor & mask, double scale) {
  // As CUDA's: a boolean mask on grad_output's device (the CPU's accepts any, and a CPU 0-dim
  // mask would pass mul as a scalar).
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  const KernelCall call("native_dropout_backward", grad_output, "grad_output");
  call.check_on_device(mask, "mask");
  // The CPU's formula, grad_output * mask * scale, in the backend's kernels, with the mask cast
  // first (a product promoting it would read it on the host: no capture).
  at::Tensor grad_input = at::mul(grad_output, mask.to(grad_output.scalar_type()));
  grad_input.mul_(at::native::wrapped_scalar_tensor(scale));
  return grad_input;
}

} // namespace scaffold::runtime
