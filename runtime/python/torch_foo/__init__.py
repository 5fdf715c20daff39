"""PyTorch backend package torch_foo, made with scaffold-backend.

Importing this package loads the compiled runtime and kernels (torch_foo._C) and registers the device
named by the backend YAML's `device:` (DEVICE_NAME) with torch: torch.device(DEVICE_NAME),
torch.<device>, Tensor.<device>(), ... It raises if another PrivateUse1 backend is already loaded
in this process.
"""

from . import _device, distributed

# The YAML's `device:`, generated beside the C++ registrations (which register the same name) and
# installed by the build: rename the device in the YAML, regenerate and rebuild.
from ._device_name import DEVICE_NAME

_C = _device.install(DEVICE_NAME, __name__)
# c10d: dist.init_process_group() on this device runs collectives through Gloo
# (see distributed.py for replacing Gloo with your own collective library).
distributed.register(DEVICE_NAME)
# The YAML's custom ops: _C defines them and registers their kernels; this module adds their fake
# kernels and autograd formulas (torch.library), built from generated/custom_ops/ and
# kernels/custom_ops/*.py.
from . import custom_ops  # type: ignore[attr-defined]  # noqa: E402,F401,I001 (after _C, in this order; the build writes it)
# The fake classes and fake kernels of the backend's custom classes (see custom_classes.py), which
# torch.compile and torch.export trace with; after _C, which registers the real ones.
from . import custom_classes  # noqa: E402,F401
