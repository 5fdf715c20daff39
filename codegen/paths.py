"""How paths appear in generated files and messages."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` (with `..` if needed), POSIX-style, for messages and headers.
    Generated files must never contain absolute paths, which differ between machines."""
    try:
        return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()
    except ValueError:  # another drive on Windows: the name is the best we can do
        return path.name


def is_inside(path: str, directory: str) -> bool:
    """`path` is `directory` or lies below it; both normalised absolute path strings."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class RealPaths:
    """`os.path.realpath` for the many files of one run, resolving each directory once: the real
    path of `directory/name` is the real path of `directory` joined with `name` unless `name`
    is itself a symlink, which one `lstat` tells. Directories are resolved when first seen, so
    make one instance per batch of paths, not one kept across writes."""

    def __init__(self) -> None:
        self._directories: dict[str, str] = {}

    def real(self, path: Path | str) -> str:
        directory, name = os.path.split(os.fspath(path))
        if name in ("", ".", ".."):
            return os.path.realpath(path)
        real_directory = self._directories.get(directory)
        if real_directory is None:
            real_directory = os.path.realpath(directory or os.curdir)
            self._directories[directory] = real_directory
        candidate = os.path.join(real_directory, name)
        return os.path.realpath(candidate) if os.path.islink(candidate) else candidate


def display_paths(paths: Iterable[Path], root: Path) -> list[str]:
    """`display_path` of each of `paths`, resolving their directories once."""
    real_paths = RealPaths()
    real_root = os.path.realpath(root)
    directories: dict[str, str] = {}  # real directory -> shown relative to the root
    shown = []
    for path in paths:
        real = real_paths.real(path)
        if real == real_root:
            shown.append(os.curdir)
            continue
        directory, name = os.path.split(real)
        try:
            if directory not in directories:
                directories[directory] = Path(os.path.relpath(directory, real_root)).as_posix()
        except ValueError:  # another drive on Windows, as in display_path
            shown.append(path.name)
            continue
        relative = directories[directory]
        shown.append(name if relative == os.curdir else f"{relative}/{name}")
    return shown


CUSTOM_OPS_DIR = "custom_ops"
"""Where custom ops' files go, under the output directory (generated Python module) and the
kernels directory (the user's files); the package installs both as `<package>.custom_ops`."""
