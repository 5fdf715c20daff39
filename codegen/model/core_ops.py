"""The core ops: the factory, copy and view kernels every backend needs before any tensor can
exist on its device, and the convolutions at::convolution cannot do without.

Their implementations are hand-written once, in the device runtime (runtime/csrc/ops/core_ops.h,
namespace scaffold::runtime), and a backend's kernel files for them forward there. They work
whether or not the host can address device memory (the driver's copies and fills; the
convolutions compute on CPU copies), so they never decline to the copying fallback: a view of a
host copy would lose every write through it, and the CPU has no convolution_overrideable.
"""

from __future__ import annotations

CORE_OPS = (
    "empty.memory_format",
    "empty_strided",
    "as_strided",
    "view",
    "_reshape_alias",
    # Views with a device-generic ATen implementation that the dispatcher still asks every backend
    # for. Through the CPU fallback they would be views of a host copy: writes through them would
    # never reach the device tensor (PyTorch's copying fallback only warns).
    "unfold",
    "view_as_complex",
    "view_as_real",
    "resize_",
    "_copy_from",
    "_copy_from_and_resize",
    "_local_scalar_dense",
    "set_.source_Storage",
    "set_.source_Storage_storage_offset",
    "set_.source_Tensor",
    "set_",
    "fill_.Scalar",
    "zero_",
    "_efficientzerotensor",
    # Not views or factories, but as necessary: at::_convolution and at::convolution_backward
    # call these for every out-of-tree tensor, and their default kernels only raise
    # (model/raising_defaults.py), so without them no CNN runs on a new backend.
    "convolution_overrideable",
    "convolution_backward_overrideable",
)

RANDOM_OPS = (
    "bernoulli_.float",
    "normal_",
    "uniform_",
    "random_",
    "random_.from",
    "random_.to",
    "native_dropout",
    "native_dropout_backward",
)
"""The random ops whose kernels the runtime ships (runtime/csrc/ops/random_ops.h, with dropout's
backward): they draw from the device's generator (the CPU's numbers for the same seed), and a
device graph captures them, drawing new numbers at every replay (the CPU fallback cannot be
captured). They compute on host views, so a new project lists them where its driver's memory is
host-addressable (HOST_ADDRESSABLE_DRIVERS); elsewhere they would decline at every call."""
RANDOM_OPS_HEADER = "random_ops.h"
