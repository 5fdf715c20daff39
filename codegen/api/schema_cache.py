"""Parsed schemas and kernel signatures, kept per declarations header digest.

Most of a full generation's computing is torchgen's: parsing the schemas of the ~860 required
ops and working out each kernel's C++ types (~0.25 s of ~1 s on a 2-core machine). Both follow
from three things only: the header's text, the installed torchgen, and this generator's code.
So they are kept in the user's cache (resources.user_cache_dir) in one file named by a digest
of all three, and a later run on the same header reads them back instead of computing them.

A cache file only saves time. One that is missing, unreadable, truncated or from another
version is ignored (and rewritten); the directory must belong to the user and be writable by
no one else, since the file is unpickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchgen.model import FunctionSchema

from .. import __version__
from ..model.declarations import DeclarationsFile
from ..parse.installed_torch import find_installed_torch
from ..resources import is_private_directory, package_dir, user_cache_dir
from .signatures import KernelSignature, SignatureKey

_FORMAT = 5
_KEPT_FILES = 8
"""Cache files kept (one per header and torch in use): the oldest beyond these are deleted."""
_CODE_FILES = (
    "model/declarations.py",
    "parse/declarations.py",
    "api/op_traits.py",
    "api/signatures.py",
    "api/schema_cache.py",
)
"""The generator's code that decides what is cached: an edit to it (in a source checkout)
must not read values the old code computed."""
ParsedSchema = tuple[FunctionSchema | None, str | None]


def cache_directory() -> Path:
    return user_cache_dir() / "schemas"


def _key(declarations: DeclarationsFile) -> str:
    digest = hashlib.sha256()
    torch = find_installed_torch()
    for part in (str(_FORMAT), __version__, torch.version, str(torch.package_dir), declarations.sha256):
        digest.update(part.encode() + b"\0")
    for name in _CODE_FILES:
        with contextlib.suppress(OSError):
            digest.update((package_dir() / name).read_bytes())
    return digest.hexdigest()


@dataclass
class SchemaCache:
    """What is known for one header. `prime` hands the schemas to its declarations before they
    are used; kernel_binding reads and extends `signatures`; `save` writes back what was added."""

    path: Path | None
    """None: no cache (the directory cannot be used)."""
    schemas: dict[str, ParsedSchema] = field(default_factory=dict)
    signatures: dict[SignatureKey, KernelSignature] = field(default_factory=dict)
    _loaded_signatures: int = 0

    @classmethod
    def open(cls, declarations: DeclarationsFile) -> SchemaCache:
        directory = cache_directory()
        path = directory / f"{_key(declarations)}.pickle"
        if not os.path.lexists(directory):
            return cls(path=path)  # `save` creates the directory
        if not is_private_directory(directory):
            return cls(path=None)
        try:
            with open(path, "rb") as stream:
                document: Any = pickle.load(stream)
            schemas, signatures = document["schemas"], document["signatures"]
            if document.get("format") != _FORMAT or not isinstance(schemas, dict) or not isinstance(signatures, dict):
                return cls(path=path)
        except Exception:  # noqa: BLE001 -- a cache that cannot be read is a cache miss
            return cls(path=path)
        return cls(path=path, schemas=schemas, signatures=signatures, _loaded_signatures=len(signatures))

    def prime(self, declarations: DeclarationsFile) -> None:
        for op_name, parsed in self.schemas.items():
            declaration = declarations.get(op_name)
            if declaration is not None and declaration.parsed is None:
                declaration.adopt_parsed(parsed)

    def save(self, declarations: DeclarationsFile) -> None:
        """Write the cache when this run computed something it lacked; never fails the run."""
        parsed = {d.op_name: p for d in declarations if (p := d.parsed) is not None}
        if self.path is None or (
            parsed.keys() <= self.schemas.keys() and len(self.signatures) == self._loaded_signatures
        ):
            return
        self.schemas.update(parsed)
        document = {"format": _FORMAT, "schemas": self.schemas, "signatures": self.signatures}
        directory = self.path.parent
        with contextlib.suppress(OSError, pickle.PicklingError):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not is_private_directory(directory):
                return
            descriptor, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
            try:
                with os.fdopen(descriptor, "wb") as stream:
                    pickle.dump(document, stream, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(temporary, self.path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            _prune(directory)


def _prune(directory: Path) -> None:
    files = sorted(directory.glob("*.pickle"), key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in files[_KEPT_FILES:]:
        with contextlib.suppress(OSError):
            stale.unlink()
