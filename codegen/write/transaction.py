"""`generate` writes its whole plan as one transaction, under a lock.

1. Intent: the list of renames and deletions, each new content's temporary file named in advance
   (`.NAME.XXXXXXXX` beside its target), is written (atomically) to `JOURNAL_NAME` in the output
   directory, marked `"state": "staging"`.
2. Stage: every new file content goes to its temporary file (fsynced). A failure here (read-only
   directory, disk full, name too long) removes what was staged and the journal: the tree is as
   it was.
3. Decide: the journal is rewritten without the staging mark. From this moment the transaction is
   decided.
4. Commit: the staged files are moved into place (os.replace) and deletions are done; then the
   journal is removed.

A run killed during 1 or 2 leaves a staging journal (or none): the next run deletes the temporary
files it names, and with them the whole attempt, however many files the killed run meant to
write (files the next run would not know of otherwise). A run killed during 3 or 4 leaves the
decided journal, and the next run finishes the renames before it plans anything. Either way the
tree is the old one or the new one. The journal is an input like the manifest: its paths are
confined to the output and kernel directories before anything is done with them.

A transaction runs under the lock of write/lock.py, so two runs cannot interleave their trees.

Each step is a function of its own (`_write_journal`, `_finish`, `_apply`, `_remove_journal`),
so what happens between two of them is all a kill can interrupt.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import OutputError, SourceLocation
from ..model.outputs import JOURNAL_NAME, Layout
from ..paths import display_path, read_bounded
from .plan import Action, Plan
from .safety import Confinement, check_confined

JOURNAL_FORMAT = 1
_MAX_JOURNAL_BYTES = 16 * 1024 * 1024
# The random part of a temporary file's name: 8 characters as tempfile.mkstemp picks them (this
# version writes lowercase hex, a subset; earlier ones used mkstemp's whole alphabet).
_TEMPORARY_SUFFIX = re.compile(r"[a-z0-9_]{8}")
_STAGING = "staging"

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


def _temporary_beside(path: Path) -> Path:
    """A fresh name for `path`'s temporary file (what tempfile.mkstemp would pick), chosen before
    the file exists so the journal can name it first."""
    suffix = secrets.token_hex(4)
    return path.parent / f".{path.name}.{suffix}"


def _write_new_file(path: Path, staged: Path, content: str) -> None:
    """Write `content` to `staged` (a new file), with `path`'s permissions; not yet durable."""
    try:
        status = os.stat(path)
        mode = status.st_mode & 0o777 if stat.S_ISREG(status.st_mode) else 0o644
    except OSError:
        mode = 0o644
    descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            data = memoryview(content.encode("utf-8", errors="surrogateescape"))
            while data:
                data = data[os.write(descriptor, data) :]
            os.fchmod(descriptor, mode)
        finally:
            os.close(descriptor)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def _fsync_path(path: Path) -> None:
    """Make a written file durable (fsync flushes the file, whatever mode it is opened in)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_batch(written: list[tuple[Path, Path]]) -> tuple[Path, BaseException] | None:
    """fsync each staged file of (target, staged) pairs; the first failure: its target, and why."""
    for path, staged in written:
        try:
            _fsync_path(staged)
        except OSError as error:
            return path, error
    return None


def _stage(path: Path, staged: Path, content: str) -> None:
    """Write `content` to `staged` (a new file, fsynced), with `path`'s permissions."""
    _write_new_file(path, staged, content)
    try:
        _fsync_path(staged)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


class _DurableStaging:
    """Stage many files and make them all durable before the transaction is decided.

    The journal needs every staged file on disk before the decision reaches it, not each one
    before the next is written. An fsync per file in turn waits for one disk flush each (~1400
    for a fresh tree: seconds on a busy disk); here every file is written first, then a few
    threads fsync them, so the filesystem commits them together, and `wait` is the barrier.
    """

    _THREADS = 16

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._pool = ThreadPoolExecutor(max_workers=self._THREADS, thread_name_prefix="scaffold-fsync")
        self._written: list[tuple[Path, Path]] = []

    def stage(self, path: Path, staged: Path, content: str) -> None:
        """Write `staged` (see _write_new_file); `wait` makes it durable."""
        _write_new_file(path, staged, content)
        self._written.append((path, staged))

    def wait(self) -> tuple[Path, BaseException] | None:
        """Block until every staged file is durable; the first failure: the target whose
        staged file could not be made durable, and why."""
        try:
            # A task per batch, not per file: a future costs about as much as a quiet disk's fsync.
            batches = [self._written[start :: self._THREADS] for start in range(self._THREADS)]
            pending = [self._pool.submit(_fsync_batch, batch) for batch in batches if batch]
            for future in pending:
                failure = future.result()
                if failure is not None:
                    return failure
            return None
        finally:
            self.close()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def commit(plan: Plan, layout: Layout) -> None:
    """Write the plan as one transaction (see the module docstring)."""
    if not plan:
        return
    confinement = Confinement(layout)
    for change in plan.changes:
        confinement.check(change.path, "a file to write", deleting=change.action is Action.DELETE)
    created_directories: list[Path] = []
    # (target, its temporary file; None: delete the target)
    operations: list[tuple[Path, Path | None]] = [
        (change.path, None if change.action is Action.DELETE else _temporary_beside(change.path))
        for change in plan.changes
    ]
    journal_written = False
    staged: list[Path] = []  # the temporaries this run made (never a file that was there)
    current: Path = layout.out_dir
    durable = _DurableStaging()
    try:
        for directory in sorted({change.path.parent for change in plan.changes} | {layout.out_dir}):
            current = directory
            missing = [d for d in (directory, *directory.parents) if not os.path.lexists(d)]
            directory.mkdir(parents=True, exist_ok=True)
            created_directories.extend(reversed(missing))
        current = journal_path(layout)
        _write_journal(layout, operations, staging=True)
        journal_written = True
        for change, (_, temporary) in zip(plan.changes, operations, strict=True):
            current = change.path
            if temporary is not None:
                assert change.content is not None
                durable.stage(change.path, temporary, change.content)
                staged.append(temporary)
        failure = durable.wait()
        if failure is not None:
            current, error = failure
            raise error
        current = journal_path(layout)
        _write_journal(layout, operations, staging=False)
    except OSError as error:
        for temporary in staged:
            with contextlib.suppress(OSError):
                temporary.unlink()
        if journal_written:
            with contextlib.suppress(OSError):
                journal_path(layout).unlink()
        for directory in reversed(created_directories):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise OutputError(
            f"cannot write: {error.strerror or error}; nothing was changed",
            location=SourceLocation(display_path(current, layout.root)),
        ) from None
    finally:
        durable.close()
    _finish(layout, operations)


def _write_journal(layout: Layout, operations: list[tuple[Path, Path | None]], *, staging: bool) -> None:
    entries = [
        {"target": layout.from_out(target), "staged": None if temporary is None else temporary.name}
        for target, temporary in operations
    ]
    document: dict[str, Any] = {"format": JOURNAL_FORMAT, "operations": entries}
    if staging:
        document["state"] = _STAGING
    path = journal_path(layout)
    temporary = _temporary_beside(path)
    # One line: json's C encoder serves only unindented output (a fresh tree's ~1400 entries
    # take ~30 ms through the Python one), and nobody reads the journal but the next run.
    _stage(path, temporary, json.dumps(document) + "\n")
    os.replace(temporary, path)
    _fsync_directory(path.parent)


def _finish(layout: Layout, staged: list[tuple[Path, Path | None]]) -> None:
    """Move every staged file into place and delete what goes; idempotent, so a rerun after an
    interruption completes it."""
    directories = set()
    try:
        for target, temporary in staged:
            _apply(target, temporary)
            directories.add(target.parent)
        for directory in sorted(directories):
            _fsync_directory(directory)
        _remove_journal(layout)
    except OSError as error:
        raise OutputError(
            f"the write was interrupted: {error.strerror or error}",
            location=SourceLocation(display_path(layout.out_dir, layout.root)),
            hint="fix the cause and run `scaffold-backend generate` again: it completes the write",
        ) from None


def _apply(target: Path, temporary: Path | None) -> None:
    """One operation of a decided transaction: its staged file moved into place, or (None) the
    target deleted. Done again after an interruption, it changes nothing more."""
    if temporary is None:
        target.unlink(missing_ok=True)
    elif temporary.exists():
        os.replace(temporary, target)


def _remove_journal(layout: Layout) -> None:
    """The last step: every operation is done and durable, so the transaction is over."""
    journal_path(layout).unlink(missing_ok=True)


def recover(layout: Layout) -> bool:
    """Complete a transaction an interrupted run left behind, or undo one that was still staging
    (delete its temporary files). True when there was one."""
    path = journal_path(layout)
    if not os.path.lexists(path):
        return False
    shown = display_path(path, layout.root)
    check_confined(path, layout, "the transaction journal")
    try:
        data = read_bounded(path, _MAX_JOURNAL_BYTES)
        if len(data) > _MAX_JOURNAL_BYTES:
            raise ValueError("too large")
        document = json.loads(data.decode("utf-8"))
        staged = _journal_operations(document, layout, shown)
        staging = _journal_state(document)
    except (OSError, ValueError, TypeError, RecursionError) as error:
        raise OutputError(
            f"the transaction journal of an interrupted run is not valid ({error})",
            location=SourceLocation(shown),
            hint="scaffold-backend did not write this file as it is; inspect the tree and delete it",
        ) from None
    if staging:
        _undo(layout, staged)
        return True
    _finish(layout, staged)
    return True


def _undo(layout: Layout, staged: list[tuple[Path, Path | None]]) -> None:
    """Delete the temporary files of a transaction that was still staging, then its journal."""
    try:
        for _, temporary in staged:
            if temporary is not None:
                _remove_temporary(temporary)
        journal_path(layout).unlink(missing_ok=True)
    except OSError as error:
        raise OutputError(
            f"cannot remove the temporary files of an interrupted run: {error.strerror or error}",
            location=SourceLocation(display_path(journal_path(layout), layout.root)),
        ) from None


def _remove_temporary(path: Path) -> None:
    """Delete a temporary file if it is there; a name too long for the filesystem never is."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        if error.errno != errno.ENAMETOOLONG:
            raise


def _journal_state(document: dict[str, Any]) -> bool:
    """True when the journal is a staging one (see the module docstring); journals without a
    state are decided ones."""
    state = document.get("state")
    if state not in (None, _STAGING):
        raise ValueError(f"state {state!r} is not {_STAGING!r}")
    return state == _STAGING


def _journal_operations(document: Any, layout: Layout, shown: str) -> list[tuple[Path, Path | None]]:
    if not isinstance(document, dict) or document.get("format") != JOURNAL_FORMAT:
        raise ValueError(f"format is not {JOURNAL_FORMAT}")
    if set(document) - {"format", "operations", "state"}:
        raise ValueError("unknown keys")
    operations = document.get("operations")
    if not isinstance(operations, list):
        raise TypeError('"operations" must be a list')
    staged: list[tuple[Path, Path | None]] = []
    confinement = Confinement(layout)
    for operation in operations:
        if not isinstance(operation, dict) or set(operation) != {"target", "staged"}:
            raise ValueError("an operation must have exactly a target and a staged file")
        target_name, staged_name = operation["target"], operation["staged"]
        if not isinstance(target_name, str) or not target_name or target_name.startswith("/"):
            raise ValueError(f"target {target_name!r} is not a relative path")
        target = Path(os.path.normpath(layout.out_dir / target_name))
        confinement.check(target, "a file named by the transaction journal", deleting=staged_name is None)
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
