// Reductions of a whole tensor to a 0-dim one whose CPU kernels are not
// structured: min and max (aten::min, aten::min.unary_out, and max's). The
// kernels of both variants go through here:
//
//   at::Tensor min(const at::Tensor& self) {
//     return rt::full_reduction("min", at::cpu::min, at::cpu::min_out, self);
//   }
//   at::Tensor& min_out(const at::Tensor& self, at::Tensor& out) {
//     return rt::full_reduction_out("min.unary_out", at::cpu::min_out, self, out);
//   }
//
// The result's shape never depends on the data, so the CPU kernel is
// launched on the current stream and writes the device result through its
// host view (host_kernel_launch.h); what it would refuse is refused at the
// call, as CUDA's host code does.
#pragma once

#include <tuple>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "host_kernel_launch.h"
#include "kernel_call.h"

namespace scaffold::runtime {

// The CPU kernel of a reduction's unary_out variant: at::cpu::min_out(out, self).
using FullReductionOut = at::Tensor& (*)(at::Tensor& out, const at::Tensor& self);
// The CPU kernel of its functional variant: at::cpu::min(self).
using FullReduction = at::Tensor (*)(const at::Tensor& self);

// The unary_out variant. Launched when out is a 0-dim tensor on self's device
// that self's dtype casts to: the CPU kernel then neither resizes out nor
// refuses it. It checks self's dtype only when it runs (no loop for complex,
// the wide unsigned types, float8), so it first runs here on a 1-element host
// twin of self, raising its own error at the call. Anything else runs inline,
// where the CPU kernel raises its errors and resizes out (with its warning).
inline at::Tensor& full_reduction_out(
    const char* op, FullReductionOut cpu_out, const at::Tensor& self, at::Tensor& out) {
  if (out.dim() == 0 && self.device() == out.device() && c10::canCast(self.scalar_type(), out.scalar_type())) {
    HostKernelLaunch launch({out, self});
    if (launch.native()) {
      at::Tensor twin = at::empty({}, out.options().device(c10::kCPU));
      cpu_out(twin, at::zeros({1}, self.options().device(c10::kCPU)));
      launch.run(op, [cpu_out](const HostViews& in) {
        at::Tensor host_out = in[0];
        cpu_out(host_out, in[1]);
        return std::make_tuple();
      });
      return out;
    }
  }
  const KernelCall call(op, out);
  OutputView o = call.output(out);
  cpu_out(o.host(), call.device_input(self, "self"));
  return o.commit();
}

// The functional variant: the unary_out one into a new 0-dim tensor of self's
// dtype. An empty self runs inline, where the CPU kernel raises (its unary_out
// variant gives the reduction's identity instead).
inline at::Tensor full_reduction(
    const char* op, FullReduction cpu, FullReductionOut cpu_out, const at::Tensor& self) {
  if (self.numel() > 0) {
    at::Tensor out = at::empty({}, self.options());
    return full_reduction_out(op, cpu_out, self, out);
  }
  const KernelCall call(op, self, "self");
  return call.adopt(cpu(call.device_input(self, "self")));
}

} // namespace scaffold::runtime
