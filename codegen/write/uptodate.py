"""The answer to "is the tree current?" of `generate` and `generate --check`, given before the
generator runs whenever the manifest can tell.

A run would change nothing when (1) what it would generate is what the manifest records, and
(2) the tree holds what the manifest records, judged by the rules a run applies to each file
(write/plan.py plans by the same functions):
- a generator-owned file has the bytes the generator writes (the manifest's digest);
- a kernel file holds no unresolved merge and defines each of its kernels
  (`kernel_file_is_current`: the checks of the run's merge, on the same functions);
- a custom class's scaffold is there (`scaffold_is_missing`);
- the kernel files left out of the build are still there (else the manifest would change).
(1) is known without generating when the manifest was written by this generator and both inputs
have the digests it records: generation is deterministic in those. Then the answer is given
here, before torchgen, Jinja or the declarations parser are imported; anything else (a missing or
unreadable manifest included) answers "cannot tell", and the full run decides, reports and
explains, saying the same as this answer when the tree is current (`up_to_date_line`,
`kernel_count`).

Which generator wrote the manifest: an installed release is identified by its version, which the
manifest records. A source checkout (this repository, an editable install) changes without a
version bump, so there the manifest's version is not enough; a full run leaves a stamp in the
user's cache directory naming the exact generator sources and the manifest it produced, and the
fast answer needs that stamp too.
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
from ..errors import ScaffoldError
from ..model.manifest import KernelFileRecord, Manifest
from ..model.outputs import JOURNAL_NAME, MANIFEST_NAME, GenerateOptions, has_conflict_markers
from ..parse import kernel_definitions
from ..parse.installed_torch import find_installed_torch
from ..parse.manifest import MAX_MANIFEST_BYTES, parse_manifest
from ..parse.torch_support import torch_support
from ..paths import CUSTOM_OPS_DIR, display_path, is_inside
from ..resources import (
    is_source_checkout,
    package_dir,
    read_private_json,
    templates_dir,
    user_cache_dir,
    write_private_json,
)

_STAMP_FORMAT = 1


@dataclass(frozen=True)
class UpToDate:
    kernels: int
    """How many kernels the manifest's kernel files define (what a full run would count)."""
    orphaned: tuple[Path, ...]
    """Kernel files left out of the build, reported on every run until the user deletes them."""


@functools.cache
def generator_identity() -> str:
    """The version for an installed release; for a source checkout, the version plus a digest of
    every source and template file, since those change between versions."""
    if not is_source_checkout():
        return __version__
    digest = hashlib.sha256()
    for directory in (package_dir(), templates_dir()):
        for relative, path in _source_files(os.fspath(directory)):
            digest.update(relative.encode() + b"\0")
            with open(path, "rb") as stream:
                digest.update(stream.read() + b"\0")
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


def _sha256_file(path: Path) -> str | None:
    try:
        with open(path, "rb") as stream:
            return hashlib.sha256(stream.read()).hexdigest()
    except OSError:
        return None


def _stamp_path(out_dir: Path) -> Path:
    key = hashlib.sha256(str(out_dir.resolve()).encode()).hexdigest()[:32]
    return user_cache_dir() / "up-to-date" / f"{key}.json"


def record_current(options: GenerateOptions) -> None:
    """After a full run that left the tree current: let later runs answer at once. Only a source
    checkout needs this; a cache that cannot be written only costs speed."""
    if not is_source_checkout():
        return
    manifest_digest = _sha256_file(options.out_dir / MANIFEST_NAME)
    if manifest_digest is None:
        return
    document = {"format": _STAMP_FORMAT, "generator": generator_identity(), "manifest": manifest_digest}
    write_private_json(_stamp_path(options.out_dir), document)


def _written_by_this_generator(manifest: Manifest, manifest_digest: str, out_dir: Path) -> bool:
    if not is_source_checkout():
        return manifest.generator_version == __version__
    stamp = read_private_json(_stamp_path(out_dir))
    return isinstance(stamp, dict) and stamp == {
        "format": _STAMP_FORMAT,
        "generator": generator_identity(),
        "manifest": manifest_digest,
    }


@dataclass(frozen=True)
class _ManifestFacts:
    """What the up-to-date decision needs from a manifest. Kept with the file statuses (see
    _KnownFiles), so that a repeated answer for the same manifest need not parse and validate
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
    kernels: int
    """How many kernels the manifest's kernel files define, as a full run reports them."""

    @classmethod
    def of(cls, manifest: Manifest) -> _ManifestFacts:
        declarations, yaml = manifest.declarations, manifest.backend_yaml
        return cls(
            declarations=(declarations.path, declarations.torch_version, declarations.sha256),
            backend_yaml=(yaml.path, yaml.sha256),
            files=tuple(relative for relative in manifest.files if relative != MANIFEST_NAME),
            kernel_files=tuple(manifest.kernel_files),
            orphaned_kernel_files=manifest.orphaned_kernel_files,
            custom_class_files=manifest.custom_class_files,
            kernels=kernel_count(manifest),
        )

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, document: Any) -> _ManifestFacts | None:
        """None unless `document` has exactly the shape to_json writes."""
        if not isinstance(document, dict) or set(document) != set(cls.__dataclass_fields__):
            return None
        lists = ("files", "kernel_files", "orphaned_kernel_files", "custom_class_files")
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


def check_up_to_date(options: GenerateOptions) -> UpToDate | None:
    """UpToDate when a full run would change nothing and say nothing new; None when only a full
    run can tell."""
    manifest_path = options.out_dir / MANIFEST_NAME
    if (options.out_dir / JOURNAL_NAME).exists() or manifest_path.is_symlink():
        return None  # an unfinished write, or a manifest to be validated: the full run says
    try:
        if not manifest_path.is_file() or manifest_path.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        manifest_bytes = manifest_path.read_bytes()
    except OSError:
        return None
    manifest_digest = hashlib.sha256(manifest_bytes).hexdigest()
    known = _KnownFiles(options.out_dir, manifest_digest)
    if known.facts is not None:
        # This manifest was parsed, validated and found current before: its facts and every
        # file's status are remembered, and a file whose status is unchanged is not read.
        current = _check_tree(known.facts, None, known, options)
        if current is not None:
            return current
    try:
        manifest = parse_manifest(manifest_bytes.decode("utf-8"), MANIFEST_NAME)
    except (UnicodeDecodeError, ScaffoldError):
        return None
    if not _written_by_this_generator(manifest, manifest_digest, options.out_dir):
        return None
    facts = _ManifestFacts.of(manifest)
    current = _check_tree(facts, manifest, known, options)
    if current is not None:
        known.save(facts)
    return current


def _check_tree(
    facts: _ManifestFacts, manifest: Manifest | None, known: _KnownFiles, options: GenerateOptions
) -> UpToDate | None:
    """The tree against the manifest's facts, by the rules of a run (see the module docstring).
    With `manifest` (parsed), a file whose status is not remembered is read and judged; without,
    it means the full check must run."""
    if not _inputs_unchanged(facts, options):
        return None
    if not _confined(facts, options):
        return None  # the full run refuses it with its reason
    # ~1400 files: plain strings and os.open(), not pathlib (whose joins cost more than the
    # reads); a file verified by an earlier check and unchanged since is not read at all.
    out_dir = os.fspath(options.out_dir)
    for relative in facts.files:
        path = os.path.join(out_dir, relative)
        if known.unchanged(relative, path):
            continue
        if manifest is None:
            return None
        read = _read_regular(path)
        if read is None or hashlib.sha256(read[0]).hexdigest() != manifest.files[relative]:
            return None
        known.verified(relative, read[1])
    kernels_prefix = Path(os.path.relpath(options.kernels_dir, options.out_dir)).as_posix() + "/"
    for relative in facts.kernel_files:
        if not relative.startswith(kernels_prefix):
            return None  # written for another kernels directory
        path = os.path.join(out_dir, relative)
        if known.unchanged(relative, path):
            continue
        if manifest is None:
            return None
        read = _read_regular(path)
        if read is None or not kernel_file_is_current(read[0], manifest.kernel_files[relative], relative):
            return None
        known.verified(relative, read[1])
    if not all(_is_regular(os.path.join(out_dir, relative)) for relative in facts.orphaned_kernel_files):
        return None
    orphaned = tuple(options.out_dir / relative for relative in facts.orphaned_kernel_files)
    if any(scaffold_is_missing(options.out_dir / relative) for relative in facts.custom_class_files):
        return None
    return UpToDate(kernels=facts.kernels, orphaned=orphaned)


def kernel_file_is_current(data: bytes, record: KernelFileRecord, name: str) -> bool:
    """A run leaves a kernel file (`data`, named `name`) as it is when the generator's text for it
    is still `record.base` and the file holds no unresolved merge and defines every kernel of
    `record.heads`: the checks of the run's merge (write/kernel_text.py), on the same functions."""
    text = data.decode("utf-8", errors="surrogateescape")  # as a run reads it
    if text == record.base:
        return True  # what the generator wrote defines each of its kernels
    code = kernel_definitions.code_of(text)
    suffix = os.path.splitext(name)[1]
    return not has_conflict_markers(code) and not kernel_definitions.missing_kernels(
        code, suffix, record.base, record.heads
    )


def scaffold_is_missing(path: Path) -> bool:
    """A scaffold (a custom class's file) is created again when nothing is at its path."""
    return not os.path.lexists(path)


def _confined(facts: _ManifestFacts, options: GenerateOptions) -> bool:
    """Every path the manifest names lies inside the output or the kernels directory, the
    symlinks of its directories followed: a crafted manifest must not make even this check read
    a file elsewhere. Each directory is resolved once; the files themselves are not (an lstat
    each for ~1400 files): `_read_regular` opens them without following a symlink, and the full
    run decides about a file that is one. (The manifest's paths have no `.` or inner `..`.)"""
    directories = (os.path.realpath(options.out_dir), os.path.realpath(options.kernels_dir))
    out_dir = os.fspath(options.out_dir)
    # The manifest's paths end in a plain name (no `..`, no `.`): a file lies inside an allowed
    # directory when its directory does, so each of the few directories is checked once.
    confined_directories: dict[str, bool] = {}
    for relative in (*facts.files, *facts.kernel_files, *facts.orphaned_kernel_files):
        if os.path.isabs(relative):
            return False
        directory = relative.rpartition("/")[0]
        confined = confined_directories.get(directory)
        if confined is None:
            real = os.path.realpath(os.path.join(out_dir, directory))
            confined = confined_directories[directory] = any(is_inside(real, allowed) for allowed in directories)
        if not confined:
            return False
    return True


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
"""O_NOFOLLOW: a symlink is not followed (see _confined); O_NONBLOCK: a FIFO planted in the
tree does not block the open."""


def _read_regular(path: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes of `path`, and its status before they were read, when it is a regular file and
    not a symlink; None otherwise."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        chunks = []
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), status
    except OSError:
        return None
    finally:
        os.close(descriptor)


_STATS_FORMAT = 2
_SETTLED_NS = 2_000_000_000
"""A file's status is remembered only once its last change is this old. A change soon after the
status was taken, within the filesystem's timestamp granularity, could leave it equal (git's
"racily clean" files); 2 s covers the coarsest common filesystems."""
Stats = list[int]


class _KnownFiles:
    """Files this check verified before, by status (size, mtime, ctime, inode), as git's index
    does: one whose status is unchanged is not read again; and the facts of the manifest they
    were verified against. Kept per output directory in the user's cache (read only when no one
    else may write there) and valid only for the manifest digest and generator it was made
    for; a document that is missing, damaged or stale only costs the reads and the parse."""

    def __init__(self, out_dir: Path, manifest_digest: str) -> None:
        self._path = _stamp_path(out_dir).with_suffix(".files.json")
        self._key = {"format": _STATS_FORMAT, "generator": generator_identity(), "manifest": manifest_digest}
        self._now = time.time_ns()
        self._known: dict[str, Any] = {}
        self._verified: dict[str, Stats] = {}
        self.facts: _ManifestFacts | None = None
        """The manifest's facts, when every file was verified against this manifest before."""
        document = read_private_json(self._path)
        if isinstance(document, dict) and all(document.get(k) == v for k, v in self._key.items()):
            files = document.get("files")
            self._known = files if isinstance(files, dict) else {}
            self.facts = _ManifestFacts.from_json(document.get("facts"))

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

    def save(self, facts: _ManifestFacts) -> None:
        """Remember what this check verified (only called when the whole tree was current).
        The facts are kept only when every file's status is: only then can a later check
        answer from them without the manifest's digests."""
        complete = all(relative in self._verified for relative in (*facts.files, *facts.kernel_files))
        kept = facts if complete else None
        if self._verified == self._known and kept == self.facts:
            return
        document = {**self._key, "files": self._verified, "facts": kept.to_json() if kept else None}
        write_private_json(self._path, document)


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _inputs_unchanged(facts: _ManifestFacts, options: GenerateOptions) -> bool:
    if options.declarations_path is None:
        try:
            torch = find_installed_torch()
        except ScaffoldError:
            return False
        header, shown, version = torch.declarations_path, torch.display_path, torch.version
    else:
        header, shown, version = options.declarations_path, display_path(options.declarations_path, options.root), None
    recorded_path, recorded_version, recorded_sha256 = facts.declarations
    if (recorded_path, recorded_version) != (shown, version):
        return False
    if _sha256_file(header) != recorded_sha256:
        return False
    yaml_path, yaml_sha256 = facts.backend_yaml
    return yaml_path == display_path(options.yaml_path, options.root) and _sha256_file(options.yaml_path) == yaml_sha256


def kernel_count(manifest: Manifest) -> int:
    """How many kernels a run reports: the aten kernels of the manifest's kernel files (custom
    ops' files, in custom_ops/, hold their CPU and device kernels and Python functions)."""
    return sum(
        len(record.heads)
        for path, record in manifest.kernel_files.items()
        if path.rpartition("/")[0].rpartition("/")[2] != CUSTOM_OPS_DIR
    )


def up_to_date_line(kernels: int) -> str:
    """What `generate` says of a tree it would not change, however it found out."""
    return f"{kernels} kernel(s), everything up to date"


def orphan_note(shown: str) -> str:
    """Said on every run while a kernel file whose ops are gone is still on disk."""
    return (
        f"note: {shown} is excluded from the build: its ops are no longer generated. "
        "It is kept until you delete it."
    )


def answer_if_up_to_date(options: GenerateOptions) -> tuple[list[str], list[str]] | None:
    """What `generate` prints (lines, notes) when the tree is up to date; None when a full run
    must decide. Refuses an unsupported torch first, as every run of `generate` does."""
    torch_support().check(find_installed_torch().version)
    current = check_up_to_date(options)
    return None if current is None else up_to_date_report(current, options.root)


def up_to_date_report(current: UpToDate, root: Path) -> tuple[list[str], list[str]]:
    """What `generate` prints for an up-to-date tree: the same as a full run would."""
    notes = [orphan_note(display_path(path, root)) for path in sorted(current.orphaned)]
    return [up_to_date_line(current.kernels)], notes
