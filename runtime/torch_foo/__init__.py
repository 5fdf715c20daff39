"""PyTorch backend for the simulated device "foo" (``torch.device("foo")``)."""

from . import _device

DEVICE_NAME = "foo"

# Loads the compiled runtime + kernels (torch_foo._C) and registers the
# device with torch: torch.foo, Tensor.foo(), ...
_C = _device.install(DEVICE_NAME, __name__)


def _autoload() -> None:
    """Entry point torch calls on ``import torch`` (group ``torch.backends``).

    Importing this package already installed the backend; nothing else to do.
    """
