"""The answer to "is the tree current?" of `generate` and `generate --check`, given before the
generator runs whenever the manifest can tell.

A run would change nothing when (1) what it would generate is what the manifest records, and
(2) the tree holds what the manifest records, judged by the rules a run applies to each file
(write/plan.py plans by the same functions):
- a generator-owned file has the bytes the generator writes (the manifest's digest);
- a kernel file holds no unresolved merge and defines each of its kernels
  (`kernel_file_is_current`: the checks of the run's merge, on the same functions);
- a custom class's scaffold is there (`scaffold_is_missing`);
- the kernel files left out of the build are still there (else the manifest would change);
- a backend project's shared file is there and holds no unresolved merge (write/shared.py).
(1) is known without generating when the manifest was written by this generator and both inputs
have the digests it records: generation is deterministic in those. Then the answer is given
here, before torchgen, Jinja or the declarations parser are imported; anything else (a missing or
unreadable manifest included) answers "cannot tell", and the full run decides, reports and
explains, saying the same as this answer when the tree is current (`up_to_date_line`,
Manifest.kernel_count). Which generator wrote the manifest, and what an earlier answer found,
is kept in uptodate_memory.py.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ScaffoldError
from ..model.manifest import KernelFileRecord, Manifest
from ..model.outputs import JOURNAL_NAME, MANIFEST_NAME, GenerateOptions, has_conflict_markers
from ..parse.installed_torch import find_installed_torch
from ..parse.manifest import MAX_MANIFEST_BYTES, parse_manifest
from ..parse.torch_support import torch_support
from ..paths import display_path, is_inside
from .uptodate_memory import KnownFiles, ManifestFacts, sha256_file, written_by_this_generator


@dataclass(frozen=True)
class UpToDate:
    kernels: int
    """How many kernels the manifest's kernel files define (what a full run would count)."""
    orphaned: tuple[Path, ...]
    """Kernel files left out of the build, reported on every run until the user deletes them."""


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
    known = KnownFiles(options.out_dir, manifest_digest)
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
    if not written_by_this_generator(manifest, manifest_digest, options.out_dir):
        return None
    facts = ManifestFacts.of(manifest)
    current = _check_tree(facts, manifest, known, options)
    if current is not None:
        known.save(facts)
    return current


def _check_tree(
    facts: ManifestFacts, manifest: Manifest | None, known: KnownFiles, options: GenerateOptions
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

    def current(relatives: tuple[str, ...], judge: Callable[[str, bytes], bool]) -> bool:
        """Each file is unchanged since verified, or (with the parsed manifest) read and judged."""
        for relative in relatives:
            path = os.path.join(out_dir, relative)
            if known.unchanged(relative, path):
                continue
            if manifest is None:
                return False
            read = _read_regular(path)
            if read is None or not judge(relative, read[0]):
                return False
            known.verified(relative, read[1])
        return True

    # Judged only with the parsed manifest: without it, `current` answers before judging.
    def generated_ok(relative: str, data: bytes) -> bool:
        return manifest is not None and hashlib.sha256(data).hexdigest() == manifest.files[relative]

    def kernel_ok(relative: str, data: bytes) -> bool:
        return manifest is not None and kernel_file_is_current(data, manifest.kernel_files[relative], relative)

    def shared_ok(relative: str, data: bytes) -> bool:
        # A shared file is current, whatever the team made of it, while it holds no unresolved
        # merge: this generator's text for it is the manifest's (write/shared.py). A missing one
        # is for the full run to name.
        return not has_conflict_markers(data.decode("utf-8", errors="surrogateescape"))

    if not current(facts.files, generated_ok):
        return None
    kernels_prefix = Path(os.path.relpath(options.kernels_dir, options.out_dir)).as_posix() + "/"
    if not all(relative.startswith(kernels_prefix) for relative in facts.kernel_files):
        return None  # written for another kernels directory
    if not current(facts.kernel_files, kernel_ok):
        return None
    if not all(_is_regular(os.path.join(out_dir, relative)) for relative in facts.orphaned_kernel_files):
        return None
    if not current(facts.shared_files, shared_ok):
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
    # Imported only here: most answers judge no kernel file (their statuses are remembered).
    from ..parse import kernel_definitions

    code = kernel_definitions.code_of(text)
    suffix = os.path.splitext(name)[1]
    return not has_conflict_markers(code) and not kernel_definitions.missing_kernels(
        code, suffix, record.base, record.heads
    )


def scaffold_is_missing(path: Path) -> bool:
    """A scaffold (a custom class's file) is created again when nothing is at its path."""
    return not os.path.lexists(path)


def _confined(facts: ManifestFacts, options: GenerateOptions) -> bool:
    """Every path the manifest names lies inside the output or the kernels directory, the
    symlinks of its directories followed: a crafted manifest must not make even this check read
    a file elsewhere. Each directory is resolved once; the files themselves are not (an lstat
    each for ~1400 files): `_read_regular` opens them without following a symlink, and the full
    run decides about a file that is one. (The manifest's paths have no `.` or inner `..`.)"""
    layout = options.layout
    shared = () if layout.project_root is None else (os.path.realpath(layout.project_root),)
    directories = (os.path.realpath(options.out_dir), os.path.realpath(options.kernels_dir), *shared)
    out_dir = os.fspath(options.out_dir)
    # The manifest's paths end in a plain name (no `..`, no `.`): a file lies inside an allowed
    # directory when its directory does, so each of the few directories is checked once.
    confined_directories: dict[str, bool] = {}
    for relative in (*facts.files, *facts.kernel_files, *facts.orphaned_kernel_files, *facts.shared_files):
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


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _inputs_unchanged(facts: ManifestFacts, options: GenerateOptions) -> bool:
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
    if sha256_file(header) != recorded_sha256:
        return False
    yaml_path, yaml_sha256 = facts.backend_yaml
    return yaml_path == display_path(options.yaml_path, options.root) and sha256_file(options.yaml_path) == yaml_sha256


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
