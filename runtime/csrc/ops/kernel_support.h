// The one include of a compute kernel of this backend (generated kernel stubs
// include it):
//   kernel_call.h     -- KernelCall and OutputView: device checks, host views
//                        of inputs, out= tensors the CPU kernel may resize;
//   structured_ops.h  -- functional, out= and in-place ops run on host views
//                        without PyTorch's default kernels' dispatcher round
//                        trips (on functional_operands.h).
#pragma once

#include "kernel_call.h"
#include "structured_ops.h"
