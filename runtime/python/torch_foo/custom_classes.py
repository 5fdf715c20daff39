"""Registers the fake classes of the backend's custom classes (device-name agnostic).

Each class declared under `custom_classes:` in the backend YAML has a fake twin, a Python file
beside its C++ in the kernels directory (`custom_classes/<name>.py`), that torch.compile and
torch.export trace with. The build installs those files into this package as `_custom_classes`;
importing them registers the fakes (``torch._library.register_fake_class``) and the fake kernels
of the ops that take the classes. The package's ``__init__`` imports this module after the
compiled module, which registers the real classes.
"""

from __future__ import annotations

import importlib
from pathlib import Path

_FAKE_CLASSES_PACKAGE = "_custom_classes"


def _import_fake_classes() -> None:
    directory = Path(__file__).resolve().parent / _FAKE_CLASSES_PACKAGE
    for path in sorted(directory.glob("*.py")):
        importlib.import_module(f"{__package__}.{_FAKE_CLASSES_PACKAGE}.{path.stem}")


_import_fake_classes()
