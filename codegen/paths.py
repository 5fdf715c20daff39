"""Paths: how they appear in generated files and messages, what a path given to the generator may
be (path_problem), and reading the file at one with a bound (read_bounded)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path


def real_path(path: Path) -> Path:
    """`path` with every symlink followed, as Path.resolve() gives it, but without its
    RuntimeError on a symlink loop: the looping part stays as it is, and whatever then uses the
    path gets the operating system's ELOOP, located."""
    return Path(os.path.realpath(path))


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` (with `..` if needed), POSIX-style, for messages and headers.
    Generated files must never contain absolute paths, which differ between machines."""
    try:
        return Path(os.path.relpath(real_path(path), real_path(root))).as_posix()
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


MAX_INPUT_BYTES = 64 * 1024 * 1024
"""No real input comes near this (torch's RegistrationDeclarations.h is ~1.5 MB); the bound keeps
an endless file such as /dev/zero from being read forever."""
NAME_MAX = 255
"""The longest name (one component of a path, in bytes) the common filesystems take."""
PATH_MAX = 4096
"""The longest path, in bytes with its terminating NUL, Linux's system calls take."""


def read_bounded(path: Path | str, limit: int) -> bytes:
    """The bytes of the file at `path`, at most `limit` + 1 of them (more means it is too large).
    A FIFO or a socket is refused (OSError ENXIO) rather than waited for: no input is one, and
    reading one would block until someone writes to it. A directory raises IsADirectoryError."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise OSError(errno.ENXIO, "is a FIFO or a socket, not a file", os.fspath(path))
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(descriptor, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def path_problem(path: str) -> str | None:
    """Why `path` cannot be an input or output path before the disk is looked at, or None: the
    operating system would refuse it (a NUL, a name or the whole path too long), or its name,
    which generated files and messages quote, is not one line of UTF-8 text. Said after the
    path's role, e.g. `--out has a name of 300 bytes ...`."""
    if any(character < " " or character == "\x7f" for character in path):
        return "contains a control character (a newline, a tab, NUL, ...)"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text (its name appears in generated files)"
    encoded = os.fsencode(path)
    if len(encoded) >= PATH_MAX:
        return f"is {len(encoded)} bytes long; a path may have at most {PATH_MAX - 1}"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        name = os.fsdecode(longest)
        return f"has a name of {len(longest)} bytes ({name[:16]}...); a name may have at most {NAME_MAX}"
    return None


CUSTOM_OPS_DIR = "custom_ops"
"""Where custom ops' files go, under the output directory (generated Python module) and the
kernels directory (the user's files); the package installs both as `<package>.custom_ops`."""
