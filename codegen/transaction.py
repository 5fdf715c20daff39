"""`generate` writes its whole plan as one transaction, under a lock.

1. Stage: every new file content goes to a temporary file beside its target (`.NAME.XXXXXXXX`,
   fsynced). A failure here (read-only directory, disk full, name too long) removes what was
   staged: the tree is as it was.
2. Journal: the list of renames and deletions is written (atomically) to `JOURNAL_NAME` in the
   output directory. From this moment the transaction is decided.
3. Commit: the staged files are moved into place (os.replace) and deletions are done; then the
   journal is removed.

A run killed during 1 leaves only temporary files, which the next run removes; a run killed during
3 leaves the journal, and the next run finishes the renames before it plans anything. Either way
the tree is the old one or the new one. The journal is an input like the manifest: its paths are
confined to the output and kernel directories before anything is done with them.

The lock is an exclusive flock on the directory holding the output directory (normally the
project), so two runs cannot interleave their trees; a second run waits briefly, then fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import LockError, OutputError, SourceLocation
from .inputs import display_path
from .outputs import JOURNAL_NAME, Layout
from .safety import check_confined
from .writer import Action, Plan

JOURNAL_FORMAT = 1
LOCK_WAIT_SECONDS = 10.0
_MAX_JOURNAL_BYTES = 16 * 1024 * 1024
# tempfile.mkstemp's random part: 8 characters of this alphabet.
_TEMPORARY_SUFFIX = re.compile(r"[a-z0-9_]{8}")


@contextmanager
def output_lock(layout: Layout, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold an exclusive lock on the directory that holds the output directory."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, as before
        yield
        return
    directory = layout.out_dir.resolve().parent
    while not directory.is_dir() and directory.parent != directory:
        directory = directory.parent
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockError(
                        f"another scaffold-backend run holds the lock on this directory "
                        f"(waited {wait_seconds:g} s)",
                        location=SourceLocation(display_path(layout.out_dir, layout.root)),
                        hint="wait for the other run to finish, then run again",
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(descriptor)  # closing the descriptor releases the lock


def journal_path(layout: Layout) -> Path:
    return layout.out_dir / JOURNAL_NAME


def has_interrupted_transaction(layout: Layout) -> bool:
    return os.path.lexists(journal_path(layout))


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _stage(path: Path, content: str) -> Path:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    staged = Path(temporary)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogateescape", newline="") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        mode = path.stat().st_mode & 0o777 if path.is_file() else 0o644
        os.chmod(staged, mode)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def commit(plan: Plan, layout: Layout) -> None:
    """Write the plan as one transaction (see the module docstring)."""
    if not plan:
        return
    for change in plan.changes:
        check_confined(change.path, layout, "a file to write")
    created_directories: list[Path] = []
    staged: list[tuple[Path, Path | None]] = []  # (target, staged file; None: delete)
    current: Path = layout.out_dir
    try:
        for directory in sorted({change.path.parent for change in plan.changes} | {layout.out_dir}):
            current = directory
            missing = [d for d in (directory, *directory.parents) if not os.path.lexists(d)]
            directory.mkdir(parents=True, exist_ok=True)
            created_directories.extend(reversed(missing))
        for change in plan.changes:
            current = change.path
            if change.action is Action.DELETE:
                staged.append((change.path, None))
            else:
                assert change.content is not None
                staged.append((change.path, _stage(change.path, change.content)))
        current = journal_path(layout)
        _write_journal(layout, staged)
    except OSError as error:
        for _, temporary in staged:
            if temporary is not None:
                temporary.unlink(missing_ok=True)
        for directory in reversed(created_directories):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise OutputError(
            f"cannot write: {error.strerror or error}; nothing was changed",
            location=SourceLocation(display_path(current, layout.root)),
        ) from None
    _finish(layout, staged)


def _write_journal(layout: Layout, staged: list[tuple[Path, Path | None]]) -> None:
    operations = [
        {"target": layout.from_out(target), "staged": None if temporary is None else temporary.name}
        for target, temporary in staged
    ]
    text = json.dumps({"format": JOURNAL_FORMAT, "operations": operations}, indent=1) + "\n"
    path = journal_path(layout)
    temporary = _stage(path, text)
    os.replace(temporary, path)
    _fsync_directory(path.parent)


def _finish(layout: Layout, staged: list[tuple[Path, Path | None]]) -> None:
    """Move every staged file into place and delete what goes; idempotent, so a rerun after an
    interruption completes it."""
    directories = set()
    try:
        for target, temporary in staged:
            if temporary is None:
                target.unlink(missing_ok=True)
            elif temporary.exists():
                os.replace(temporary, target)
            directories.add(target.parent)
        for directory in sorted(directories):
            _fsync_directory(directory)
        journal_path(layout).unlink(missing_ok=True)
    except OSError as error:
        raise OutputError(
            f"the write was interrupted: {error.strerror or error}",
            location=SourceLocation(display_path(layout.out_dir, layout.root)),
            hint="fix the cause and run `scaffold-backend generate` again: it completes the write",
        ) from None


def recover(layout: Layout) -> bool:
    """Complete a transaction an interrupted run left behind. True when there was one."""
    path = journal_path(layout)
    if not os.path.lexists(path):
        return False
    shown = display_path(path, layout.root)
    check_confined(path, layout, "the transaction journal")
    try:
        with open(path, "rb") as stream:
            data = stream.read(_MAX_JOURNAL_BYTES + 1)
        if len(data) > _MAX_JOURNAL_BYTES:
            raise ValueError("too large")
        document = json.loads(data.decode("utf-8"))
        staged = _journal_operations(document, layout, shown)
    except (OSError, ValueError, TypeError, RecursionError) as error:
        raise OutputError(
            f"the transaction journal of an interrupted run is not valid ({error})",
            location=SourceLocation(shown),
            hint="scaffold-backend did not write this file as it is; inspect the tree and delete it",
        ) from None
    _finish(layout, staged)
    return True


def _journal_operations(document: Any, layout: Layout, shown: str) -> list[tuple[Path, Path | None]]:
    if not isinstance(document, dict) or document.get("format") != JOURNAL_FORMAT:
        raise ValueError(f"format is not {JOURNAL_FORMAT}")
    operations = document.get("operations")
    if not isinstance(operations, list):
        raise TypeError('"operations" must be a list')
    staged: list[tuple[Path, Path | None]] = []
    for operation in operations:
        if not isinstance(operation, dict) or set(operation) != {"target", "staged"}:
            raise ValueError("an operation must have exactly a target and a staged file")
        target_name, staged_name = operation["target"], operation["staged"]
        if not isinstance(target_name, str) or not target_name or target_name.startswith("/"):
            raise ValueError(f"target {target_name!r} is not a relative path")
        target = Path(os.path.normpath(layout.out_dir / target_name))
        check_confined(target, layout, "a file named by the transaction journal")
        if staged_name is None:
            staged.append((target, None))
            continue
        if not isinstance(staged_name, str) or not is_temporary_name(staged_name, target.name):
            raise ValueError(f"staged file {staged_name!r} is not a temporary file of {target_name!r}")
        staged.append((target, target.parent / staged_name))
    return staged


def is_temporary_name(name: str, target_name: str) -> bool:
    prefix = f".{target_name}."
    return name.startswith(prefix) and bool(_TEMPORARY_SUFFIX.fullmatch(name[len(prefix) :]))


def remove_stale_temporaries(targets: Iterable[Path], layout: Layout) -> list[Path]:
    """Delete the temporary files (`.NAME.XXXXXXXX`) an interrupted run left beside any of
    `targets`; called under the lock, after `recover`, so none of them belongs to a live run."""
    wanted: dict[Path, set[str]] = {}
    for target in targets:
        wanted.setdefault(target.parent, set()).add(target.name)
    wanted.setdefault(layout.out_dir, set()).add(JOURNAL_NAME)
    removed = []
    for directory, names in sorted(wanted.items()):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_file(follow_symlinks=False):
                continue
            stem, dot, _ = entry.name.rpartition(".")
            if dot and stem.startswith(".") and stem[1:] in names and is_temporary_name(entry.name, stem[1:]):
                Path(entry.path).unlink(missing_ok=True)
                removed.append(Path(entry.path))
    return removed
