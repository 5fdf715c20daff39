"""Careful writing: plan every change first; write/transaction.py then writes the plan.

Every output is planned by its owner (model/outputs.Owner), in one place (`plan_outputs`):
- a generator-owned file is written when its bytes differ, deleted when no longer produced;
- a user-owned kernel file is created once, then merged (write/merge.py, write/kernel_text.py);
- a user's scaffold is created when it is missing, and never read or changed otherwise.

- A file is written only when its bytes change, so a no-op regeneration touches nothing (mtimes
  stay, incremental builds stay incremental).
- Every write goes to a temporary file beside the target and is moved into place with
  os.replace, so a reader never sees half a file.
- Every refusal (a hand-edited generated file, a file scaffold-backend did not write, the same
  path produced twice) is found while planning, before anything is written.
- User-owned files are never overwritten or deleted here; kernel files are merged.
"""

from __future__ import annotations

import enum
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..emit.kernel_file import KernelFile
from ..errors import OutputError, SourceLocation
from ..model.manifest import Manifest, sha256_text
from ..model.outputs import GENERATED_MARKER, MANIFEST_NAME, Layout, OutputFile, Owner
from ..paths import MAX_INPUT_BYTES, display_path, read_bounded
from . import kernel_text
from .merge import MergeOutcome, MergeResult, update_kernel_file
from .uptodate import scaffold_is_missing


class Action(enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    MERGE = "merge"
    """A user-owned kernel file whose generated parts changed, merged with the user's edits."""
    CONFLICT = "conflict"
    """Like MERGE, but with conflict markers where the merge was not clean."""


@dataclass(frozen=True)
class Change:
    path: Path
    action: Action
    content: str | None
    """The new text; None for DELETE."""


@dataclass(frozen=True)
class Plan:
    changes: tuple[Change, ...]

    def __bool__(self) -> bool:
        return bool(self.changes)


def read_text_if_exists(path: Path, root: Path) -> str | None:
    """A generated file's text; None when it is not there. Errors name it relative to `root`."""
    try:
        data = read_bounded(path, MAX_INPUT_BYTES)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise _not_text(path, root) from None
    except OSError as error:  # e.g. a path below a regular file
        location = SourceLocation(display_path(path, root))
        raise OutputError(f"cannot be read: {error.strerror or error}", location=location) from None
    try:
        if len(data) > MAX_INPUT_BYTES:
            raise ValueError("far too large")
        return data.decode("utf-8")
    except ValueError:  # UnicodeDecodeError included
        raise _not_text(path, root) from None


def _not_text(path: Path, root: Path) -> OutputError:
    return OutputError("cannot be replaced: it is not a text file", location=SourceLocation(display_path(path, root)))


def check_unique_paths(outputs: Iterable[OutputFile]) -> None:
    seen: set[Path] = set()
    for output in outputs:
        if output.path in seen:
            raise OutputError(
                "two outputs would be written to the same file",
                location=SourceLocation(str(output.path)),
                hint="the kernels directory and the output directory must not overlap",
            )
        seen.add(output.path)


@dataclass(frozen=True)
class OutputPlan:
    plan: Plan
    """Every change, user-owned files first; among generator-owned ones the manifest last, so that
    a run interrupted before its end leaves the old record for the next one."""
    merges: dict[Path, MergeResult]
    """User-owned files that needed more than creation, and what their merge gave."""
    edited: tuple[Path, ...]
    """Generator-owned files the plan changes that someone else wrote or edited since."""


def plan_outputs(
    outputs: Sequence[OutputFile],
    merge_sources: Mapping[Path, KernelFile],
    previous: Manifest | None,
    layout: Layout,
    *,
    force: bool,
) -> OutputPlan:
    """The changes that bring the tree to `outputs`, each planned by its owner. `merge_sources`
    gives each user-owned output's kernels (what a merge adds or updates), by path. Without
    `force`, a generator-owned file someone else edited stops the plan (see _refuse_to_clobber)."""
    user_changes: list[Change] = []
    merges: dict[Path, MergeResult] = {}
    generated: list[OutputFile] = []
    for output in outputs:
        if output.owner is Owner.GENERATOR:
            generated.append(output)
        elif output.owner is Owner.USER:
            change, merge = _plan_kernel_file(merge_sources[output.path], previous, layout)
            user_changes += [change] if change is not None else []
            if merge is not None:
                merges[output.path] = merge
        elif scaffold_is_missing(output.path):  # Owner.SCAFFOLD
            user_changes.append(Change(output.path, Action.CREATE, output.content))
    generated_changes = _plan_generated_files(generated, previous, layout, layout.root, force=force)
    ordered = sorted(generated_changes, key=lambda change: change.path.name == MANIFEST_NAME)
    return OutputPlan(
        Plan(tuple(user_changes + ordered)), merges, tuple(_hand_edited(generated_changes, previous, layout))
    )


def _plan_kernel_file(
    kernel: KernelFile, previous: Manifest | None, layout: Layout
) -> tuple[Change | None, MergeResult | None]:
    """A kernel file: created when missing; else the user's text, merged with what the generator
    owns in it (its definition lines, its missing kernels)."""
    path = kernel.output.path
    current = kernel_text.read_kernel_file(path, layout.root)
    if current is None:
        return Change(path, Action.CREATE, kernel.output.content), None
    record = previous.kernel_files.get(layout.from_out(path)) if previous else None
    shown = display_path(path, layout.root)
    result = kernel_text.update_preserving_form(current, record, kernel, update_kernel_file, shown)
    merge = result if result.outcome is not MergeOutcome.UNCHANGED or result.removed_ops else None
    if result.content == current:
        return None, merge
    action = {
        MergeOutcome.REGENERATED: Action.UPDATE,
        MergeOutcome.MERGED: Action.MERGE,
        MergeOutcome.CONFLICT: Action.CONFLICT,
    }[result.outcome]
    return Change(path, action, result.content), merge


def _plan_generated_files(
    outputs: Iterable[OutputFile],
    previous: Manifest | None,
    layout: Layout,
    root: Path,
    *,
    force: bool,
) -> list[Change]:
    """Changes to generator-owned files, including deletion of ones no longer produced."""
    changes = []
    recorded: Mapping[str, str] = previous.files if previous is not None else {}
    produced = set()
    for output in outputs:
        assert output.owner is Owner.GENERATOR
        relative = layout.from_out(output.path)
        produced.add(relative)
        current = read_text_if_exists(output.path, layout.root)
        if current == output.content:
            continue
        if current is None:
            changes.append(Change(output.path, Action.CREATE, output.content))
            continue
        if not force:
            _refuse_to_clobber(output.path, current, recorded.get(relative), root, previous is not None)
        changes.append(Change(output.path, Action.UPDATE, output.content))
    for relative, digest in sorted(recorded.items()):
        if relative in produced:
            continue
        path = layout.out_dir / relative
        current = read_text_if_exists(path, layout.root)
        if current is None:
            continue
        if not force and sha256_text(current) != digest:
            raise OutputError(
                "this generated file is no longer produced, but it was edited by hand since the "
                "last generation, so it is not deleted",
                location=SourceLocation(display_path(path, root)),
                hint="move what you need into a kernel file and delete it, or pass --force",
            )
        changes.append(Change(path, Action.DELETE, None))
    return changes


def _hand_edited(changes: Iterable[Change], previous: Manifest | None, layout: Layout) -> list[Path]:
    """The generator-owned files among `changes` that someone else wrote or edited: what a run
    without --force refuses to overwrite or delete."""
    recorded: Mapping[str, str] = previous.files if previous is not None else {}
    edited = []
    for change in changes:
        if change.action not in (Action.UPDATE, Action.DELETE):
            continue
        current = read_text_if_exists(change.path, layout.root)
        if current is None:
            continue
        digest = recorded.get(layout.from_out(change.path))
        if digest is None:
            # Not written by scaffold-backend, or (no manifest at all) nothing tells a stale
            # generated file from an edited one: either way the bytes may be the user's.
            if previous is None or GENERATED_MARKER not in "\n".join(current.split("\n", 3)[:3]):
                edited.append(change.path)
        elif sha256_text(current) != digest:
            edited.append(change.path)
    return edited


def _refuse_to_clobber(
    path: Path, current: str, recorded_digest: str | None, root: Path, has_manifest: bool
) -> None:
    """Overwrite a generated file only if it is still exactly what scaffold-backend wrote."""
    location = SourceLocation(display_path(path, root))
    if recorded_digest is None:
        if GENERATED_MARKER not in "\n".join(current.split("\n", 3)[:3]):
            raise OutputError(
                "exists and was not written by scaffold-backend; refusing to overwrite it",
                location=location,
                hint="choose another --out directory, or pass --force to replace it",
            )
        if has_manifest:
            return
        # No manifest records this file, so nothing tells a stale generated file from one edited
        # by hand: its bytes differ from what would be written, so they are the user's.
        raise OutputError(
            "differs from what would be generated and no manifest records it, so it may hold "
            "edits; refusing to overwrite it",
            location=location,
            hint="restore the manifest (scaffold_manifest.json) from version control, or pass "
            "--force to regenerate it",
        )
    elif sha256_text(current) != recorded_digest:
        raise OutputError(
            "this generated file was edited by hand since the last generation; refusing to "
            "overwrite the edits",
            location=location,
            hint="move the change into a kernel file (generated files are rewritten on every "
            "run), or pass --force to discard it",
        )


def write_atomically(path: Path, content: str, shown: str | None = None) -> None:
    """Write `content` to `path` through a temporary file and a rename; `shown` names the file in
    an error (default: `path`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as stream:
                stream.write(content)
            if path.exists():
                os.chmod(temporary, path.stat().st_mode & 0o777)
            else:
                os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise OutputError(
            f"cannot write: {error.strerror}", location=SourceLocation(shown or str(path))
        ) from None
