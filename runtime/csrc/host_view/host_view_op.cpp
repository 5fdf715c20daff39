// torch.ops.scaffold_runtime.host_view(device_tensor) -> CPU tensor aliasing
// the same memory: the runtime's host_view (memory_access.h) as an operator,
// so Python code outside the kernels can hand device memory to a host
// library without a copy. The distributed backend (python/<package>/
// distributed.py) gives these views to Gloo, and the code Inductor generates
// for the device (python/<package>/_inductor.py) calls it on the tensor
// arguments of a compiled C++ kernel it cannot launch (one taking a double);
// for that, a CPU tensor passes through unchanged.
//
// The view goes through the host mapping, so memory protection stays on: the
// device view remains PROT_NONE. It has the device tensor's sizes, strides,
// storage offset and dtype, and keeps the device storage alive. The caller
// owns ordering: synchronise the device's stream before reading or writing
// through the view.
//
// A runtime whose memory the host cannot address (a discrete accelerator)
// drops this file; the distributed backend then stages through pinned host
// buffers instead.
//
// The namespace is fixed (not the device name) because these runtime sources
// are device-name agnostic; PyTorch allows one PrivateUse1 backend per
// process, so two runtimes never register it in one process.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "memory_access.h"

namespace scaffold::runtime {
namespace {

at::Tensor host_view_op(const at::Tensor& device_tensor) {
  return host_view(device_tensor);
}

at::Tensor cpu_tensor_as_is(const at::Tensor& cpu_tensor) {
  return cpu_tensor;
}

} // namespace
} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  // Tensor(a) -> Tensor(a): the result aliases the input.
  m.def("host_view(Tensor(a) self) -> Tensor(a)");
}

TORCH_LIBRARY_IMPL(scaffold_runtime, PrivateUse1, m) {
  m.impl("host_view", TORCH_FN(scaffold::runtime::host_view_op));
}

TORCH_LIBRARY_IMPL(scaffold_runtime, CPU, m) {
  m.impl("host_view", TORCH_FN(scaffold::runtime::cpu_tensor_as_is));
}
