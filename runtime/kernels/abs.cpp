// Kernels of aten::abs for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/abs.h"

#include <c10/util/Exception.h>

#include <ATen/native/Resize.h>
#include <ATen/ops/abs_cpu_dispatch.h>
#include <ATen/ops/abs_compositeexplicitautograd_dispatch.h>
#include "kernel_support.h"

namespace foo {

at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out) {
  namespace rt = scaffold::runtime;
  if (self.scalar_type() == at::kBool && out.scalar_type() == at::kBool) {
    // The CPU kernel has no bool abs; CUDA's is the identity.
    at::native::resize_output(out, self.sizes());
    return out.copy_(self);
  }
  const rt::KernelCall call("abs.out", out);
  rt::OutputView o = call.output(out);
  at::cpu::abs_out(o.host(), call.input(self, "self"));
  return o.commit();
}

at::Tensor abs(const at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // ATen's abs has no structured kernel: the CPU one is abs.out into an
  // empty result (of the real dtype, for complex tensors).
  if (self.scalar_type() == at::kBool) {
    // The CPU kernel has no bool abs; CUDA's is the identity.
    return self.clone();
  }
  rt::Elementwise e({self}, c10::toRealValueType(self.scalar_type()));
  if (e.fast()) {
    return e.launch("abs", [](rt::Elementwise& e) { at::cpu::abs_out(e.out(), e.input(0)); });
  }
  if (e.native()) {
    // Other layouts: the CPU kernel decides the result's strides.
    return e.adopt(at::compositeexplicitautograd::abs(e.input(0)));
  }
  return at::compositeexplicitautograd::abs(self);
}

at::Tensor & abs_(at::Tensor & self) {
  namespace rt = scaffold::runtime;
  // As ATen's abs_: abs.out into self, for tensors that are not complex.
  TORCH_CHECK(!self.is_complex(), "In-place abs is not supported for complex tensors.");
  if (self.scalar_type() == at::kBool) {
    return self; // the identity, as CUDA's
  }
  rt::InplaceElementwise e(self, {});
  if (!e.native()) {
    return at::compositeexplicitautograd::abs_(self);
  }
  at::cpu::abs_out(e.self(), e.self());
  return self;
}

}  // namespace foo
