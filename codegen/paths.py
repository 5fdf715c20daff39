"""How paths appear in generated files and messages."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` (with `..` if needed), POSIX-style, for messages and headers.
    Generated files must never contain absolute paths, which differ between machines."""
    try:
        return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()
    except ValueError:  # another drive on Windows: the name is the best we can do
        return path.name


CUSTOM_OPS_DIR = "custom_ops"
"""Where custom ops' files go, under the output directory (generated Python module) and the
kernels directory (the user's files); the package installs both as `<package>.custom_ops`."""
