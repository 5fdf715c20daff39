"""The entry point torch calls on ``import torch`` to load the 'foo' backend.

It lives outside the torch_foo package so that a backend that cannot load becomes a warning
here rather than a failed ``import torch``: losing the race for PrivateUse1 to another installed
backend (PyTorch allows one per process), or an extension built against another torch release.
torch calls this while ``import torch`` runs, and an exception here fails that import (from torch
2.15 on, every later ``import torch`` of the process too). An explicit ``import torch_foo``
still raises the error.
"""

import importlib
import warnings


def load() -> None:
    try:
        importlib.import_module("torch_foo")
    except Exception as error:  # noqa: BLE001  (any error: see the module's docstring)
        if getattr(error, "privateuse1_conflict", False):
            reason = str(error)
        else:
            reason = (
                f"{type(error).__name__}: {error} (`import torch_foo` shows the whole error; an extension "
                "built against another torch release is rebuilt with `pip install --no-build-isolation .`)"
            )
        warnings.warn(f"torch_foo was not loaded: {reason}", RuntimeWarning, stacklevel=2)
