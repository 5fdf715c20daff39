"""The lock a `generate` run holds on its output: an exclusive flock on the output directory itself
(and on the kernel directory when it lies outside it), so two runs cannot interleave their trees
while runs on other outputs beside it go on; a second run on the same output waits briefly, then
fails."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LockError, OutputError, SourceLocation
from ..model.outputs import Layout
from ..paths import display_path

LOCK_WAIT_SECONDS = 10.0


@contextmanager
def output_lock(layout: Layout, wait_seconds: float = LOCK_WAIT_SECONDS, *, create: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the output directory itself, and on the kernel directory when it
    lies outside it: an flock on each directory, so no lock file lies in the tree for `--check`
    or the manifest to see. Runs on other outputs, siblings included, never wait for it; a second
    run on the same output (or writing the same kernel directory) waits up to `wait_seconds`,
    then fails. The directories are locked in one global order (by real path), so two runs never
    wait for each other crosswise.

    A directory that does not exist yet cannot be locked: its nearest existing ancestor is locked
    just long enough to create it (`create`, for runs that write), then the new directory is
    locked, so a run that finds it already there serialises with its creator. A directory created
    so and still empty when the run ends (it failed before writing) is removed again; a run
    waiting on it then sees that the lock it got is on a removed directory and starts over.
    Without `create` (runs that only read) the ancestor stays locked for the run."""
    try:
        import fcntl  # noqa: F401 - POSIX only
    except ImportError:  # pragma: no cover - not POSIX: no lock, as before
        yield
        return
    out_dir = Path(os.path.realpath(layout.out_dir))
    kernels_dir = Path(os.path.realpath(layout.kernels_dir))
    directories = {out_dir: display_path(layout.out_dir, layout.root)}
    if not kernels_dir.is_relative_to(out_dir):
        directories[kernels_dir] = display_path(layout.kernels_dir, layout.root)
    locks = _DirectoryLocks(time.monotonic() + wait_seconds, wait_seconds)
    created: list[Path] = []
    try:
        for directory, shown in sorted(directories.items(), key=lambda item: str(item[0])):
            created += locks.lock_creating(directory, shown, create)
        yield
    finally:
        for directory in sorted(created, key=lambda path: len(path.parts), reverse=True):  # only empty ones go
            with contextlib.suppress(OSError):
                directory.rmdir()
        locks.release()


class _DirectoryLocks:
    """The directory locks one run holds (see `output_lock`), each directory locked once."""

    def __init__(self, deadline: float, wait_seconds: float) -> None:
        self.deadline = deadline
        self.wait_seconds = wait_seconds
        self.held: dict[tuple[int, int], int] = {}  # (device, inode) -> locked descriptor

    def release(self) -> None:
        for descriptor in self.held.values():
            os.close(descriptor)  # closing the descriptor releases the lock
        self.held.clear()

    def lock_creating(self, directory: Path, shown: str, create: bool) -> list[Path]:
        """Lock `directory`, creating it first when `create` (and it can be); the directories
        created for it, deepest first, to be removed again if still empty."""
        while True:
            if directory.is_dir():
                if self._lock(directory, shown):
                    return []
                continue  # its creator removed it while we waited: start over
            ancestor = directory.parent
            while not ancestor.is_dir() and ancestor.parent != ancestor:
                ancestor = ancestor.parent
            already_held = self._holds(ancestor)
            if not already_held and not self._lock(ancestor, shown):
                continue
            if directory.is_dir():  # created meanwhile: lock it instead
                if not already_held:
                    self._unlock(ancestor)
                continue
            if not create:
                return []  # the ancestor stays locked
            missing = [path for path in (directory, *directory.parents) if not os.path.lexists(path)]
            try:
                directory.mkdir(parents=True)
            except OSError:
                return []  # not creatable (below a regular file, no permission): the run says why
            try:
                self._lock(directory, shown)  # new, so no creator can have removed it
            finally:
                if not already_held:
                    self._unlock(ancestor)
            return missing

    def _holds(self, directory: Path) -> bool:
        try:
            return _identity(os.stat(directory)) in self.held
        except OSError:
            return False

    def _unlock(self, directory: Path) -> None:
        with contextlib.suppress(OSError):
            descriptor = self.held.pop(_identity(os.stat(directory)), None)
            if descriptor is not None:
                os.close(descriptor)

    def _lock(self, directory: Path, shown: str) -> bool:
        """Lock `directory`, waiting until the deadline; False when the directory was removed or
        replaced meanwhile (nothing is then held)."""
        import fcntl

        if self._holds(directory):
            return True
        try:
            descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError as error:
            raise OutputError(
                f"cannot lock the directory: {error.strerror or error}", location=SourceLocation(shown)
            ) from None
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= self.deadline:
                    os.close(descriptor)
                    raise LockError(
                        "another scaffold-backend run holds the lock on this directory "
                        f"(waited {self.wait_seconds:g} s)",
                        location=SourceLocation(shown),
                        hint="wait for the other run to finish, then run again",
                    ) from None
                time.sleep(0.05)
        opened = _identity(os.fstat(descriptor))
        try:
            still_there = _identity(os.stat(directory)) == opened
        except OSError:
            still_there = False
        if not still_there:
            os.close(descriptor)
            return False
        self.held[opened] = descriptor
        return True


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino
