"""The installed torch, found without importing it (importing torch costs seconds)."""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..errors import DeclarationsError

# Where every torch wheel ships the header, relative to the torch package directory.
INSTALLED_HEADER = Path("include") / "ATen" / "RegistrationDeclarations.h"


@dataclass(frozen=True)
class InstalledTorch:
    package_dir: Path
    version: str

    @property
    def declarations_path(self) -> Path:
        return self.package_dir / INSTALLED_HEADER

    @property
    def display_path(self) -> str:
        """Named relative to site-packages, so output does not depend on where torch lives."""
        return (Path("torch") / INSTALLED_HEADER).as_posix()


def torch_release(package_dir: Path) -> str | None:
    """The release of the torch installation in `package_dir` (e.g. "2.14.1", no local suffix),
    read from the `__version__ = '...'` line of its version.py, which every wheel writes: neither
    importing it (seconds, and impossible for another installation) nor importlib.metadata (ten
    times the cost). None when there is no such line."""
    try:
        for line in (package_dir / "version.py").read_text(encoding="utf-8").splitlines():
            name, equals, value = line.partition("=")
            if equals and name.strip() == "__version__":
                return value.strip().strip("'\"").split("+", 1)[0]
    except (OSError, UnicodeDecodeError):
        pass
    return None


def _version_of(package_dir: Path) -> str:
    release = torch_release(package_dir)
    if release is not None:
        return release
    # Imported only here: importlib.metadata (with the email package it loads) costs a tenth of
    # a second, as long as all of an up-to-date `generate --check`.
    import importlib.metadata

    return importlib.metadata.version("torch").split("+", 1)[0]


@functools.cache
def find_installed_torch() -> InstalledTorch:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise DeclarationsError(
            "torch is not installed, so there is no RegistrationDeclarations.h to read",
            hint="install torch (e.g. pip install torch==2.13.0) or pass --declarations FILE",
        )
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    return InstalledTorch(package_dir=package_dir, version=_version_of(package_dir))
