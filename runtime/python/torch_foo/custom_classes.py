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
import importlib.util
import pkgutil

_FAKE_CLASSES_PACKAGE = f"{__package__}._custom_classes"


def _import_fake_classes() -> None:
    # Found through the import system, not beside this file: an editable install imports this
    # module from the source tree, while the build installed `_custom_classes` with the compiled
    # module (scikit-build-core's editable finder maps both into the package).
    if importlib.util.find_spec(_FAKE_CLASSES_PACKAGE) is None:
        return  # the backend declares no custom classes
    package = importlib.import_module(_FAKE_CLASSES_PACKAGE)
    for module in sorted(info.name for info in pkgutil.iter_modules(package.__path__)):
        importlib.import_module(f"{_FAKE_CLASSES_PACKAGE}.{module}")


_import_fake_classes()
