"""The fast "up to date" answer of `generate` and `generate --check`.

Most runs change nothing: a pre-commit hook, a CI job, a build that regenerates first. Those runs
are decided here from the manifest alone, before torchgen, Jinja or the declarations parser are
imported: the tree is current when the generator is the one that wrote the manifest, both inputs
have the digests the manifest records, every generator-owned file on disk has its recorded digest,
every kernel file exists without unresolved conflict markers, and the kernel files left out of the
build are still there. Anything else (a missing or unreadable manifest included) answers "cannot
tell", and the full generation decides, reports and explains.

Which generator wrote the manifest: an installed release is identified by its version, which the
manifest records. A source checkout (this repository, an editable install) changes without a
version bump, so there the manifest's version is not enough; a full run leaves a stamp in the
user's cache directory naming the exact generator sources and the manifest it produced, and the
fast answer needs that stamp too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .conflicts import START_MARKER, has_conflict_markers
from .errors import ScaffoldError
from .installed_torch import find_installed_torch
from .manifest import MAX_MANIFEST_BYTES, Manifest, parse_manifest
from .options import GenerateOptions
from .outputs import JOURNAL_NAME, MANIFEST_NAME
from .paths import CUSTOM_OPS_DIR, display_path, is_inside
from .resources import is_source_checkout, package_dir, templates_dir, user_cache_dir

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
        for path in sorted(directory.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return f"{__version__}+source.{digest.hexdigest()[:16]}"


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
    stamp = _stamp_path(options.out_dir)
    document = {"format": _STAMP_FORMAT, "generator": generator_identity(), "manifest": manifest_digest}
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        temporary = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        temporary.write_text(json.dumps(document))
        os.replace(temporary, stamp)
    except OSError:
        pass


def _written_by_this_generator(manifest: Manifest, manifest_digest: str, out_dir: Path) -> bool:
    if not is_source_checkout():
        return manifest.generator_version == __version__
    try:
        stamp = json.loads(_stamp_path(out_dir).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp == {
        "format": _STAMP_FORMAT,
        "generator": generator_identity(),
        "manifest": manifest_digest,
    }


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
        manifest = parse_manifest(manifest_bytes.decode("utf-8"), MANIFEST_NAME)
    except (OSError, UnicodeDecodeError, ScaffoldError):
        return None
    if not _written_by_this_generator(manifest, hashlib.sha256(manifest_bytes).hexdigest(), options.out_dir):
        return None
    if not _inputs_unchanged(manifest, options):
        return None
    if not _confined(manifest, options):
        return None  # the full run refuses it with its reason
    # ~1400 files: plain strings and open(), not pathlib (whose joins cost more than the reads).
    out_dir = os.fspath(options.out_dir)
    for relative, digest in manifest.files.items():
        if relative == MANIFEST_NAME:
            continue
        data = _read_regular(os.path.join(out_dir, relative))
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    kernels_prefix = Path(os.path.relpath(options.kernels_dir, options.out_dir)).as_posix() + "/"
    for relative in manifest.kernel_files:
        if not relative.startswith(kernels_prefix):
            return None  # written for another kernels directory
        data = _read_regular(os.path.join(out_dir, relative))
        try:
            text = None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or (START_MARKER in text and has_conflict_markers(text)):
            return None
    if not all(_is_regular(os.path.join(out_dir, relative)) for relative in manifest.orphaned_kernel_files):
        return None
    orphaned = tuple(options.out_dir / relative for relative in manifest.orphaned_kernel_files)
    if not all((options.out_dir / relative).is_file() for relative in manifest.custom_class_files):
        return None  # the full run creates it again
    # aten kernels only, as a full run reports them: custom ops' files (custom_ops/) hold their
    # CPU/device kernels and Python functions.
    kernels = sum(
        len(record.heads)
        for path, record in manifest.kernel_files.items()
        if Path(path).parent.name != CUSTOM_OPS_DIR
    )
    return UpToDate(kernels=kernels, orphaned=orphaned)


def _confined(manifest: Manifest, options: GenerateOptions) -> bool:
    """Every path the manifest names lies inside the output or the kernels directory, the
    symlinks of its directories followed: a crafted manifest must not make even this check read
    a file elsewhere. Each directory is resolved once; the files themselves are not (an lstat
    each for ~1400 files): `_read_regular` opens them without following a symlink, and the full
    run decides about a file that is one. (The manifest's paths have no `.` or inner `..`.)"""
    directories = (os.path.realpath(options.out_dir), os.path.realpath(options.kernels_dir))
    real_directories: dict[str, str] = {}
    out_dir = os.fspath(options.out_dir)
    for relative in (*manifest.files, *manifest.kernel_files, *manifest.orphaned_kernel_files):
        if os.path.isabs(relative):
            return False
        directory, name = os.path.split(os.path.join(out_dir, relative))
        real_directory = real_directories.get(directory)
        if real_directory is None:
            real_directory = real_directories[directory] = os.path.realpath(directory)
        resolved = os.path.join(real_directory, name)
        if not any(is_inside(resolved, allowed) for allowed in directories):
            return False
    return True


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
"""O_NOFOLLOW: a symlink is not followed (see _confined); O_NONBLOCK: a FIFO planted in the
tree does not block the open."""


def _read_regular(path: str) -> bytes | None:
    """The bytes of `path` when it is a regular file and not a symlink; None otherwise."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks = []
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _inputs_unchanged(manifest: Manifest, options: GenerateOptions) -> bool:
    if options.declarations_path is None:
        try:
            torch = find_installed_torch()
        except ScaffoldError:
            return False
        header, shown, version = torch.declarations_path, torch.display_path, torch.version
    else:
        header, shown, version = options.declarations_path, display_path(options.declarations_path, options.root), None
    recorded = manifest.declarations
    if (recorded.path, recorded.torch_version) != (shown, version):
        return False
    if _sha256_file(header) != recorded.sha256:
        return False
    yaml = manifest.backend_yaml
    return yaml.path == display_path(options.yaml_path, options.root) and _sha256_file(options.yaml_path) == yaml.sha256


def orphan_note(shown: str) -> str:
    """Said on every run while a kernel file whose ops are gone is still on disk."""
    return (
        f"note: {shown} is excluded from the build: its ops are no longer generated. "
        "It is kept until you delete it."
    )


def up_to_date_report(current: UpToDate, root: Path) -> tuple[list[str], list[str]]:
    """What `generate` prints for an up-to-date tree: the same as a full run would."""
    notes = [orphan_note(display_path(path, root)) for path in sorted(current.orphaned)]
    return [f"{current.kernels} kernel(s), everything up to date"], notes
