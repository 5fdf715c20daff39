#include "compiled_kernel_access.h"

#include <torch/library.h>

#include "memory_access.h"

namespace scaffold::runtime {

at::Tensor host_view_for_compiled_kernel(const at::Tensor& tensor) {
  if (tensor.device().type() == c10::DeviceType::CPU) {
    return tensor;
  }
  return host_view(tensor);
}

} // namespace scaffold::runtime

// The schema takes no alias annotation: the op is called only by Inductor's
// generated wrapper at run time, never traced, and its result is used as the
// raw memory of the argument.
TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  m.def("host_view(Tensor self) -> Tensor");
}

TORCH_LIBRARY_IMPL(scaffold_runtime, PrivateUse1, m) {
  m.impl("host_view", TORCH_FN(scaffold::runtime::host_view_for_compiled_kernel));
}

TORCH_LIBRARY_IMPL(scaffold_runtime, CPU, m) {
  m.impl("host_view", TORCH_FN(scaffold::runtime::host_view_for_compiled_kernel));
}
