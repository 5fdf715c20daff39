// Kernels of aten::arange for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/arange.h"

#include <tuple>

#include <c10/util/Exception.h>

#include <ATen/Dispatch.h>
#include <ATen/native/RangeUtils.h>
#include <ATen/ops/arange_cpu_dispatch.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

namespace {

// The number of elements the CPU kernel gives out: its own dtype dispatch, arithmetic and checks,
// which raise here, at the call, with the CPU kernel's messages.
int64_t cpu_arange_size(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::ScalarType dtype) {
  int64_t size = 0;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "arange_cpu", [&] {
    size = at::native::compute_arange_size<scalar_t>(start, end, step);
  });
  return size;
}

}  // namespace

at::Tensor & arange_out(const at::Scalar & start, const at::Scalar & end, const at::Scalar & step, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  // The output's size follows from the scalars alone, so torch.arange's empty out (a language
  // model's position ids, every step) is resized here, on the host, and the CPU kernel, left only
  // to fill it, is launched. An out that already has elements, of another count, makes the CPU
  // kernel warn, and a strided one copy back: those run inline.
  const int64_t size = cpu_arange_size(start, end, step, out.scalar_type());
  if (out.numel() == 0 || out.numel() == size) {
    rt::HostKernelLaunch launch({out});
    if (launch.native()) {
      if (out.numel() != size) {
        out.resize_({size});
      }
      if (size == 0) {
        return out;
      }
      if (out.is_contiguous()) {
        launch.run("arange.start_out", [start, end, step](const rt::HostViews& views) {
          at::Tensor filled = views[0];
          at::cpu::arange_out(filled, start, end, step);
          return std::tuple<>();
        });
        return out;
      }
    }
  }
  const rt::KernelCall call("arange.start_out", out);
  rt::OutputView o = call.output(out);
  at::cpu::arange_out(o.host(), start, end, step);
  return o.commit();
}

}  // namespace foo
