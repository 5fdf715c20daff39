"""PyTorch backend for the 'foo' device: ``torch.device("foo")``.

Made with scaffold-backend. Importing this package loads the compiled runtime and kernels
(torch_foo._C) and registers the device with torch (torch.foo, Tensor.foo(),
...). It raises if another PrivateUse1 backend is already loaded in this process.
"""

from . import _device

DEVICE_NAME = "foo"

_C = _device.install(DEVICE_NAME, __name__)
