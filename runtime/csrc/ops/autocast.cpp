// torch.autocast("<device>", dtype=...) for this backend: PyTorch's own
// autocast op lists (ATen/autocast_mode.h, the lists CUDA and CPU use),
// registered for the AutocastPrivateUse1 key. Ops on no list fall through.
//
// A registration file only: the casting itself is ATen's WrapFunction. Ops
// PyTorch does not cast are added by the backend YAML's `autocast:` section
// (generated/RegisterAutocastPrivateUse1.cpp); a backend whose hardware needs
// PyTorch's own lists changed edits the lines below.
//
// autocast_mode.h pulls in ATen.h (the slowest include of the runtime, ~30 s);
// it is confined to this translation unit.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

// Each list macro passes (op) or (op, overload); the policy is appended.
#define SCAFFOLD_AUTOCAST_LOWER_PRECISION_FP(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define SCAFFOLD_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define SCAFFOLD_AUTOCAST_FP32_SET_OPT_DTYPE(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define SCAFFOLD_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

// Inside at::autocast, as in ATen's own registrations: the lists name
// Tensor, Scalar and the cast policies unqualified.
namespace at::autocast {
namespace {

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(SCAFFOLD_AUTOCAST_LOWER_PRECISION_FP)
  AT_FORALL_FP32(SCAFFOLD_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(SCAFFOLD_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(
      KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(SCAFFOLD_AUTOCAST_PROMOTE)
}

} // namespace
} // namespace at::autocast
