// The one include of a compute kernel of this backend (generated kernel stubs
// include it):
//   kernel_call.h     -- KernelCall and OutputView: device checks, host views
//                        of inputs, out= tensors the CPU kernel may resize;
//   functional_ops.h  -- functional and in-place ops run on host views without
//                        PyTorch's default kernels' dispatcher round trips.
#pragma once

#include "functional_ops.h"
#include "kernel_call.h"
