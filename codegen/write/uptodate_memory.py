"""What the up-to-date answer (uptodate.py) keeps between runs, in the user's cache: only to save
time, never trusted without a check of what it was made from.

- The stamp: which generator wrote a manifest. An installed release is identified by its version,
  which the manifest records; a source checkout (this repository, an editable install) changes
  without a version bump, so a full run there leaves a stamp naming the exact generator sources
  and the manifest it produced, and the fast answer needs that stamp too.
- The tree: the facts of a manifest found current, and the status of every file verified against
  it, so that a file whose status is unchanged is not read again (as git's index).
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..model.manifest import Manifest
from ..model.outputs import MANIFEST_NAME, GenerateOptions
from ..paths import MAX_INPUT_BYTES
from ..resources import (
    data_dir,
    is_source_checkout,
    package_dir,
    read_private_json,
    templates_dir,
    user_cache_dir,
    write_private_json,
)
from ..runtime_files import copied_from_runtime

_STAMP_FORMAT = 1


@functools.cache
def generator_identity() -> str:
    """The version for an installed release; for a source checkout, the version plus a digest of
    every source and template file and of the runtime files projects share, since those change
    between versions."""
    if not is_source_checkout():
        return __version__
    digest = hashlib.sha256()
    for directory in (package_dir(), templates_dir()):
        for relative, path in _source_files(os.fspath(directory)):
            digest.update(relative.encode() + b"\0")
            with open(path, "rb") as stream:
                digest.update(stream.read() + b"\0")
    runtime = data_dir("runtime")  # what projects share, which `generate` keeps current in them
    for relative in copied_from_runtime(runtime):
        digest.update(relative.encode() + b"\0" + (runtime / relative).read_bytes() + b"\0")
    return f"{__version__}+source.{digest.hexdigest()[:16]}"


def _source_files(directory: str) -> list[tuple[str, str]]:
    """Every file under `directory` but byte code, as (posix path relative to it, path), sorted.
    os.walk, not Path.rglob: this runs on every up-to-date answer of a source checkout, and
    rglob with its per-path objects took 4 ms of it for ~90 files, os.walk 0.5 ms."""
    files = []
    for parent, directories, names in os.walk(directory):
        directories[:] = [name for name in directories if name != "__pycache__"]
        relative_parent = os.path.relpath(parent, directory).replace(os.sep, "/")
        for name in names:
            relative = name if relative_parent == "." else f"{relative_parent}/{name}"
            files.append((relative, os.path.join(parent, name)))
    return sorted(files)


def sha256_file(path: Path) -> str | None:
    """The digest of a regular file no larger than any input may be; None for anything else (a
    FIFO is not waited for, /dev/zero not read): the full run then says what is wrong with it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_INPUT_BYTES:
            return None
        digest = hashlib.sha256()
        while chunk := os.read(descriptor, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(descriptor)


def stamp_path(out_dir: Path) -> Path:
    key = hashlib.sha256(os.path.realpath(out_dir).encode()).hexdigest()[:32]
    return user_cache_dir() / "up-to-date" / f"{key}.json"


def record_current(options: GenerateOptions) -> None:
    """After a full run that left the tree current: let later runs answer at once. Only a source
    checkout needs this; a cache that cannot be written only costs speed."""
    if not is_source_checkout():
        return
    manifest_digest = sha256_file(options.out_dir / MANIFEST_NAME)
    if manifest_digest is None:
        return
    document = {"format": _STAMP_FORMAT, "generator": generator_identity(), "manifest": manifest_digest}
    write_private_json(stamp_path(options.out_dir), document)


def written_by_this_generator(manifest: Manifest, manifest_digest: str, out_dir: Path) -> bool:
    if not is_source_checkout():
        return manifest.generator_version == __version__
    stamp = read_private_json(stamp_path(out_dir))
    return isinstance(stamp, dict) and stamp == {
        "format": _STAMP_FORMAT,
        "generator": generator_identity(),
        "manifest": manifest_digest,
    }


@dataclass(frozen=True)
class ManifestFacts:
    """What the up-to-date decision needs from a manifest. Kept with the file statuses (see
    KnownFiles), so that a repeated answer for the same manifest need not parse and validate
    it again: for 858 ops that was half of the check."""

    declarations: tuple[str, str | None, str]
    """The header's shown path, torch version and sha256."""
    backend_yaml: tuple[str, str]
    """The YAML's shown path and sha256."""
    files: tuple[str, ...]
    """The generator-owned files but the manifest itself."""
    kernel_files: tuple[str, ...]
    orphaned_kernel_files: tuple[str, ...]
    custom_class_files: tuple[str, ...]
    shared_files: tuple[str, ...]
    kernels: int
    """How many kernels the manifest's kernel files define, as a full run reports them."""

    @classmethod
    def of(cls, manifest: Manifest) -> ManifestFacts:
        declarations, yaml = manifest.declarations, manifest.backend_yaml
        return cls(
            declarations=(declarations.path, declarations.torch_version, declarations.sha256),
            backend_yaml=(yaml.path, yaml.sha256),
            files=tuple(relative for relative in manifest.files if relative != MANIFEST_NAME),
            kernel_files=tuple(manifest.kernel_files),
            orphaned_kernel_files=manifest.orphaned_kernel_files,
            custom_class_files=manifest.custom_class_files,
            shared_files=tuple(manifest.shared_files),
            kernels=manifest.kernel_count,
        )

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, document: Any) -> ManifestFacts | None:
        """None unless `document` has exactly the shape to_json writes."""
        if not isinstance(document, dict) or set(document) != set(cls.__dataclass_fields__):
            return None
        lists = ("files", "kernel_files", "orphaned_kernel_files", "custom_class_files", "shared_files")
        declarations, yaml, kernels = document["declarations"], document["backend_yaml"], document["kernels"]
        if not (
            all(isinstance(document[name], list) and all(isinstance(item, str) for item in document[name])
                for name in lists)
            and isinstance(declarations, list) and len(declarations) == 3
            and isinstance(declarations[0], str) and isinstance(declarations[2], str)
            and (declarations[1] is None or isinstance(declarations[1], str))
            and isinstance(yaml, list) and len(yaml) == 2 and all(isinstance(item, str) for item in yaml)
            and isinstance(kernels, int)
        ):
            return None
        return cls(
            declarations=(declarations[0], declarations[1], declarations[2]),
            backend_yaml=(yaml[0], yaml[1]),
            kernels=kernels,
            **{name: tuple(document[name]) for name in lists},
        )


_STATS_FORMAT = 2
_SETTLED_NS = 2_000_000_000
"""A file's status is remembered only once its last change is this old. A change soon after the
status was taken, within the filesystem's timestamp granularity, could leave it equal (git's
"racily clean" files); 2 s covers the coarsest common filesystems."""
Stats = list[int]


class KnownFiles:
    """Files this check verified before, by status (size, mtime, ctime, inode), as git's index
    does: one whose status is unchanged is not read again; and the facts of the manifest they
    were verified against. Kept per output directory in the user's cache (read only when no one
    else may write there) and valid only for the manifest digest and generator it was made
    for; a document that is missing, damaged or stale only costs the reads and the parse."""

    def __init__(self, out_dir: Path, manifest_digest: str) -> None:
        self._path = stamp_path(out_dir).with_suffix(".files.json")
        self._key = {"format": _STATS_FORMAT, "generator": generator_identity(), "manifest": manifest_digest}
        self._now = time.time_ns()
        self._known: dict[str, Any] = {}
        self._verified: dict[str, Stats] = {}
        self.facts: ManifestFacts | None = None
        """The manifest's facts, when every file was verified against this manifest before."""
        document = read_private_json(self._path)
        if isinstance(document, dict) and all(document.get(k) == v for k, v in self._key.items()):
            files = document.get("files")
            self._known = files if isinstance(files, dict) else {}
            self.facts = ManifestFacts.from_json(document.get("facts"))

    @staticmethod
    def _stats(status: os.stat_result) -> Stats:
        return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]

    def unchanged(self, relative: str, path: str) -> bool:
        """`path` is a regular file whose status is the one remembered for it."""
        remembered = self._known.get(relative)
        if remembered is None:
            return False
        try:
            status = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISREG(status.st_mode) or self._stats(status) != remembered:
            return False
        self._verified[relative] = remembered
        return True

    def verified(self, relative: str, status: os.stat_result) -> None:
        """`relative`, with this status, was read and found current."""
        if self._now - max(status.st_mtime_ns, status.st_ctime_ns) > _SETTLED_NS:
            self._verified[relative] = self._stats(status)

    def save(self, facts: ManifestFacts) -> None:
        """Remember what this check verified (only called when the whole tree was current).
        The facts are kept only when every file's status is: only then can a later check
        answer from them without the manifest's digests."""
        complete = all(relative in self._verified for relative in (*facts.files, *facts.kernel_files))
        kept = facts if complete else None
        if self._verified == self._known and kept == self.facts:
            return
        document = {**self._key, "files": self._verified, "facts": kept.to_json() if kept else None}
        write_private_json(self._path, document)
