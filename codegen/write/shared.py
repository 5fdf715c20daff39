"""Keeping a backend project's shared files current (which files: model/project.py).

Each shared file is brought to the tool's text by a three-way merge against its base, the tool's
text from the last run (SharedFileRecord):
- a file still holding that text (unedited) takes the new text;
- a file the team edited gets the tool's changes merged in (merge3); where an edit and a change
  of the tool collide, the file gets conflict markers and the run fails naming it, as kernel
  files do; until the markers are resolved, nothing more is merged into it;
- a file the team deleted stays deleted (and is named on every run);
- a file the tool no longer ships is deleted when unedited, else kept as the team's and named.
A project made before the tool kept records (0.1) is migrated by the same rules, its base taken
from git (parse/project_history.py). Where no base can be found, the team's text and the tool's
stand side by side between conflict markers: nothing is lost and nothing guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..model.manifest import Manifest, SharedFileRecord, git_blob_id
from ..model.outputs import Layout, has_conflict_markers
from ..parse import project_history
from ..paths import display_path
from .kernel_text import read_kernel_file
from .merge import three_way_merge
from .plan import Action, Change


@dataclass(frozen=True)
class SharedPlan:
    changes: tuple[Change, ...]
    records: dict[str, SharedFileRecord]
    """The manifest's shared_files after the run (paths relative to the output directory)."""
    conflicts: tuple[Path, ...]
    notes: tuple[str, ...]


def _read(path: Path, root: Path) -> str | None:
    return read_kernel_file(path, root, "shared file")


def _base(
    current: str, record: SharedFileRecord | None, project_root: Path, relative: str
) -> str | None:
    """The tool's text the team's `current` started from; None when nothing tells."""
    if record is None:  # a project made before records were kept
        return project_history.first_committed_text(project_root, relative)
    if git_blob_id(current) == record.blob:
        return current
    if record.base is not None:
        return record.base
    return project_history.blob_text(project_root, record.blob)


def plan_shared_files(
    files: Mapping[str, str], previous: Manifest | None, layout: Layout, project_root: Path
) -> SharedPlan:
    """The changes that bring the shared files (`files`: text by path relative to
    `project_root`) to this tool's text, keeping the team's edits."""
    recorded: Mapping[str, SharedFileRecord] = previous.shared_files if previous is not None else {}
    changes: list[Change] = []
    records: dict[str, SharedFileRecord] = {}
    conflicts: list[Path] = []
    notes: list[str] = []
    for relative, text in sorted(files.items()):
        path = project_root / relative
        key = layout.from_out(path)
        shown = display_path(path, layout.root)
        record = recorded.get(key)
        current = _read(path, layout.root)
        if current is None:
            if record is not None:
                notes.append(
                    f"note: {shown}, a file scaffold-backend keeps current, was deleted; it stays "
                    "deleted (restore it from git to have it kept current again)"
                )
                records[key] = record
            else:
                changes.append(Change(path, Action.CREATE, text))
                records[key] = SharedFileRecord(git_blob_id(text))
            continue
        if has_conflict_markers(current):
            # Unresolved from an earlier run: the merge it started waits for the team.
            conflicts.append(path)
            records[key] = record if record is not None else SharedFileRecord(git_blob_id(text), text)
            continue
        if current == text:
            records[key] = SharedFileRecord(git_blob_id(text))
            continue
        if record is not None and record.blob == git_blob_id(text):
            records[key] = SharedFileRecord(record.blob, text)  # the team's edits of this very text
            continue
        base = _base(current, record, project_root, relative)
        if base == text:  # the tool's text is unchanged since: the team's edits stand
            records[key] = SharedFileRecord(git_blob_id(text), text)
            continue
        if base is None:
            notes.append(
                f"note: {shown} differs from scaffold-backend's text and git has no copy of the "
                "text it was made from, so both stand between conflict markers"
            )
        merged, conflicted = three_way_merge(base or "", current, text)
        if conflicted:
            action = Action.CONFLICT
            conflicts.append(path)
        else:
            action = Action.UPDATE if base == current else Action.MERGE
        changes.append(Change(path, action, merged))
        records[key] = SharedFileRecord(git_blob_id(text), None if merged == text else text)
    for key, record in sorted(recorded.items()):
        if key in records:
            continue
        path = layout.out_dir / key
        current = _read(path, layout.root)
        if current is None:
            continue
        if git_blob_id(current) == record.blob:
            changes.append(Change(path, Action.DELETE, None))
        else:
            notes.append(
                f"note: {display_path(path, layout.root)} is no longer a file scaffold-backend "
                "keeps current; it holds your edits, so it stays, as yours"
            )
    return SharedPlan(tuple(changes), records, tuple(conflicts), tuple(notes))
