// Which tensors may take over another's TensorImpl: `var.data = other` and
// `Module.to()`/`Module._apply`, which swap `.data` in place when
// aten::_has_compatible_shallow_copy_type says yes and otherwise make new
// Parameters. c10's answer (TensorImpl::has_compatible_shallow_copy_type)
// lists the in-tree dense backends only and leaves PrivateUse1 to register
// its own. Without it, a CPU parameter and its copy on this device are
// "incompatible": `.data =` raises, and `.to(device)` replaces every
// parameter by a new one, so a parameter shared by two modules (a language
// model's embedding and output head) becomes two, each with half of the
// gradient -- training diverges with no error. With it, dense tensors of
// this backend and of c10's dense backends swap both ways, as CPU and CUDA
// tensors do.
#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

namespace scaffold::runtime {
namespace {

// Dense tensors of this backend or of one of c10's dense backends.
bool is_dense(c10::DispatchKeySet keys) {
  constexpr auto dense_backends = c10::DispatchKeySet(
      {c10::BackendComponent::CPUBit,
       c10::BackendComponent::CUDABit,
       c10::BackendComponent::MPSBit,
       c10::BackendComponent::HIPBit,
       c10::BackendComponent::XPUBit,
       c10::BackendComponent::HPUBit,
       c10::BackendComponent::MTIABit,
       c10::BackendComponent::PrivateUse1Bit});
  return keys.has_any(c10::DispatchKeySet(c10::DispatchKey::Dense)) && keys.has_any(dense_backends);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) ||
      (is_dense(self.key_set()) && is_dense(from.key_set()));
}

} // namespace
} // namespace scaffold::runtime

// The op dispatches on both arguments' keys, so a call with one tensor of
// this backend lands here whichever argument it is; calls without one keep
// ATen's kernel. Registered under the autograd key too, where a tensor that
// requires grad dispatches first (the op is CompositeImplicitAutograd).
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(scaffold::runtime::has_compatible_shallow_copy_type));
}
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(scaffold::runtime::has_compatible_shallow_copy_type));
}
