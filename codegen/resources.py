"""Where the data shipped with scaffold-backend lives.

In a wheel, setuptools copies templates/ into the package (scaffold_backend/templates). In the
source tree and in editable installs the package directory is codegen/, and templates/ is its
sibling at the repository root.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

_PACKAGE_DIR = Path(__file__).resolve().parent


def package_dir() -> Path:
    return _PACKAGE_DIR


def is_source_checkout() -> bool:
    """True when running from the repository (directly or as an editable install): the data
    directories are siblings of the package instead of inside it."""
    return not (_PACKAGE_DIR / "templates").is_dir()


def data_dir(name: str) -> Path:
    packaged = _PACKAGE_DIR / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent / name


def templates_dir() -> Path:
    return data_dir("templates")


def user_cache_dir() -> Path:
    """scaffold-backend's directory in the user's cache (XDG_CACHE_HOME, else ~/.cache). What is
    kept there only saves time: anything may be deleted, and none of it may be trusted as input
    without a check of what it was made from."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scaffold-backend"


def is_private_directory(directory: Path) -> bool:
    """The directory is the user's own and nobody else may write to it: what the user cache
    must be before anything kept there is read back as an answer."""
    try:
        status = os.stat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(status.st_mode)
        and status.st_uid == os.getuid()
        and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def read_private_json(path: Path) -> Any:
    """The JSON document kept at `path` in the user cache; None when it is missing, unreadable,
    not JSON, or in a directory others may write (it is then no answer)."""
    try:
        return json.loads(path.read_bytes()) if is_private_directory(path.parent) else None
    except (OSError, ValueError):
        return None


def write_private_json(path: Path, document: Any) -> None:
    """Keep `document` at `path` in the user cache: written whole (a temporary file renamed over
    it), and only into a directory no one else may write. A cache that cannot be written only
    costs time, so failures are ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not is_private_directory(path.parent):
            return
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(document))
        os.replace(temporary, path)
    except OSError:
        pass
