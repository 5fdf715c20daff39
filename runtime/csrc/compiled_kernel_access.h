// Device memory for code compiled outside this library (Inductor's C++ kernels).
//
// Inductor's CPU code generation serves this device because its memory is
// host memory -- but only through the host view (device pointers are mapped
// PROT_NONE, see allocator.h). A compiled kernel receives raw pointers from
// its Python wrapper, so the wrapper passes host views instead of device
// tensors. It reaches them through one operator, registered here:
//
//   torch.ops.scaffold_runtime.host_view(device_tensor) -> CPU tensor, same memory
//
// The namespace is device-name agnostic (one PrivateUse1 backend per process).
// A real device replaces this with its own kernel launch path.
#pragma once

#include <ATen/core/Tensor.h>

namespace scaffold::runtime {

// host_view for a device tensor; a CPU tensor is returned as is (compiled
// kernels may also take CPU scalars).
at::Tensor host_view_for_compiled_kernel(const at::Tensor& tensor);

} // namespace scaffold::runtime
