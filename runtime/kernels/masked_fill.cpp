// Kernels of aten::masked_fill for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/masked_fill.h"

#include <c10/util/Exception.h>

#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/masked_fill_cpu_dispatch.h>
#include <ATen/ops/zeros.h>
#include "host_kernel_launch.h"
#include "kernel_support.h"

namespace foo {

at::Tensor & masked_fill_(at::Tensor & self, const at::Tensor & mask, const at::Scalar & value) {
  namespace rt = scaffold::runtime;
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_: expected a boolean mask, got ", mask.scalar_type());
  // Launched when nothing is left for the CPU kernel to refuse or warn about: self dense and
  // apart from the mask, the mask broadcastable to self. Inline, an attention mask filled in the
  // middle of a forward would wait for all the work before it.
  if (self.is_non_overlapping_and_dense() && at::is_expandable_to(mask.sizes(), self.sizes()) &&
      !mask.storage().is_alias_of(self.storage())) {
    rt::HostKernelLaunch launch({self, mask});
    if (launch.native()) {
      // What the CPU kernel checks before reading data (a value self's dtype cannot hold), raised
      // here at the call: the same kernel on a 0-dim host twin.
      at::Tensor twin = at::empty({}, self.options().device(c10::kCPU));
      at::cpu::masked_fill_(twin, at::zeros({}, mask.options().device(c10::kCPU)), value);
      launch.run("masked_fill_.Scalar", [value](const rt::HostViews& in) {
        at::Tensor host_self = in[0];
        at::cpu::masked_fill_(host_self, in[1], value);
        return std::make_tuple();
      });
      return self;
    }
  }
  const rt::KernelCall call("masked_fill_.Scalar", self, "self");
  at::Tensor host = call.inplace(self);
  at::cpu::masked_fill_(host, call.input(mask, "mask"), value);
  return self;
}

}  // namespace foo
