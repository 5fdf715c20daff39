"""The entry point torch calls on ``import torch`` to load the 'foo' backend.

It lives outside the torch_foo package so that losing the race for PrivateUse1 to another
installed backend (PyTorch allows one per process) becomes a warning here rather than a failed
``import torch``; an explicit ``import torch_foo`` still raises the error.
"""

import importlib
import warnings


def load() -> None:
    try:
        importlib.import_module("torch_foo")
    except RuntimeError as error:
        if not getattr(error, "privateuse1_conflict", False):
            raise
        warnings.warn(f"torch_foo was not loaded: {error}", RuntimeWarning, stacklevel=2)
