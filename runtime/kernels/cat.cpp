// Kernels of aten::cat for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/cat.h"

#include <c10/util/Exception.h>

#include <vector>

#include <ATen/ops/cat_cpu_dispatch.h>
#include <c10/core/WrapDimMinimal.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & cat_out(const at::ITensorListRef & tensors, int64_t dim, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(tensors.size() > 0, "cat.out: expected a non-empty list of tensors");
  // Launched on the stream when out already has the concatenation's shape (PyTorch's functional
  // cat allocates it so) and nothing needs a check that reads data or converts: every tensor of
  // out's dtype and of one rank, equal but for `dim`, none sharing out's memory. A legacy empty
  // tensor (sizes [0], a key cache's first state) of out's dtype is skipped, as the CPU kernel
  // skips it. Run inline, a concatenation (rotary embeddings, skip connections, a growing key
  // cache) would wait for all the work before it.
  std::vector<at::Tensor> operands;
  operands.reserve(tensors.size() + 1);
  bool fits = true;
  for (const at::Tensor& t : tensors) {
    const bool legacy_empty = t.dim() == 1 && t.size(0) == 0;
    fits = fits && t.scalar_type() == out.scalar_type();
    if (!legacy_empty) {
      operands.push_back(t);
    } else {
      fits = fits && t.device() == out.device(); // else the inline path raises the device error
    }
  }
  const int64_t rank = operands.empty() ? 0 : operands.front().dim();
  fits = fits && rank > 0 && out.dim() == rank;
  const int64_t axis = fits ? c10::maybe_wrap_dim(dim, rank) : 0;
  int64_t concatenated = 0;
  for (const at::Tensor& t : operands) {
    if (!fits) {
      break;
    }
    fits = t.dim() == rank && !t.storage().is_alias_of(out.storage());
    for (int64_t d = 0; fits && d < rank; ++d) {
      fits = d == axis || t.size(d) == out.size(d);
    }
    concatenated += fits ? t.size(axis) : 0;
  }
  if (fits && concatenated == out.size(axis)) {
    operands.push_back(out);
    rt::HostKernelLaunch launch(std::move(operands)); // writes the last
    if (launch.native()) {
      launch.run("cat.out", [axis](const rt::HostViews& in) {
        at::Tensor host_out = in.back();
        at::cpu::cat_out(host_out, at::TensorList(in.data(), in.size() - 1), axis);
        return std::make_tuple();
      });
      return out;
    }
  }
  const rt::KernelCall call("cat.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::cat_out(o.host(), call.inputs(tensors, "tensors"), dim);
  return o.commit();
}

}  // namespace foo
