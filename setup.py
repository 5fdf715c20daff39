"""What the wheel holds, from the rules the tool itself reads by: every package under codegen/,
and as package data the runtime files `init` copies into projects (codegen/runtime_files.py) and
every template, so an installed scaffold-backend has each file it reads. The rest of the
package's description is in pyproject.toml."""

import importlib.util
from pathlib import Path
from types import ModuleType

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent


def _runtime_files() -> ModuleType:
    # Loaded by path: the package is not importable while it is being built.
    spec = importlib.util.spec_from_file_location("_scaffold_runtime_files", ROOT / "codegen" / "runtime_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_rules = _runtime_files()
setup(
    packages=[
        "scaffold_backend",
        *(f"scaffold_backend.{name}" for name in find_packages(str(ROOT / "codegen"))),
        "scaffold_backend.templates",
        "scaffold_backend.runtime",
    ],
    package_data={
        "scaffold_backend": ["py.typed"],
        "scaffold_backend.templates": _rules.template_files(ROOT / "templates"),
        "scaffold_backend.runtime": _rules.copied_from_runtime(ROOT / "runtime"),
    },
)
