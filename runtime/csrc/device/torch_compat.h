// What differs between the torch releases this runtime supports
// (cmake/torch-requirement.txt), written once. Kernels and runtime
// components use public API where it exists; where a release changed a
// signature the runtime has to match, the difference is spelled here and
// nowhere else. Widening the supported range means reading torch's release
// notes for these APIs and adding a case here, not #ifs in kernels.
#pragma once

#include <torch/version.h>

// True when the torch being compiled against is older than major.minor.
#define SCAFFOLD_TORCH_OLDER_THAN(major, minor) \
  (TORCH_VERSION_MAJOR < (major) ||             \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR < (minor)))

// Structured kernels' output hooks (at::impl::MetaBase::set_output_strided,
// set_output_raw_strided) took the outputs' dimension names until named
// tensors were removed in torch 2.13. An override declares its parameters
// as `(int64_t, IntArrayRef, IntArrayRef, TensorOptions
// SCAFFOLD_OUTPUT_NAMES_PARAMETER)`, and calls a base hook with
// `(..., options SCAFFOLD_NO_OUTPUT_NAMES)` (this backend has no named
// tensors).
#if SCAFFOLD_TORCH_OLDER_THAN(2, 13)
#include <ATen/core/Dimname.h>
#define SCAFFOLD_OUTPUT_NAMES_PARAMETER , at::DimnameList /*names*/
#define SCAFFOLD_NO_OUTPUT_NAMES , at::DimnameList {}
#else
#define SCAFFOLD_OUTPUT_NAMES_PARAMETER
#define SCAFFOLD_NO_OUTPUT_NAMES
#endif
