"""Updating kernel files that belong to the user.

The generator owns only a kernel file's definition lines (one per kernel); everything else is the
user's. When a regeneration changes what the generator would write:

1. an untouched file (still byte-identical to what was generated last time) is regenerated;
2. an edited file gets a structural update: each changed definition line is replaced where it
   stands (found by its exact text) and no other byte moves, so every line the user wrote
   survives. Kernels new to the group are not added here: kernel_text.add_missing_kernels adds,
   after any merge, a stub for each kernel the file does not define, so a kernel the user had
   already written (ahead of the YAML, or under another layout) is not added a second time;
3. if a definition line can no longer be found verbatim (the user reformatted or edited it), a
   line-based three-way merge (merge3) of base, user and new text takes over, and where that is
   not clean the file gets conflict markers and the run fails naming it.

Kernels whose ops left the group are never deleted: their code stays and is reported.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

import merge3

from ..emit.kernel_file import KernelFile
from ..model.manifest import KernelFileRecord
from ..model.outputs import END_MARKER, START_MARKER, has_conflict_markers


class MergeOutcome(enum.Enum):
    UNCHANGED = "unchanged"
    """Nothing to do: the generated parts did not change, or the file is already up to date."""
    REGENERATED = "regenerated"
    """The file was untouched since the last generation and is replaced by the new text."""
    MERGED = "merged"
    CONFLICT = "conflict"
    UNTRACKED = "untracked"
    """The file exists but the manifest has no record of it: it is left exactly as it is."""


@dataclass(frozen=True)
class MergeResult:
    outcome: MergeOutcome
    content: str
    removed_ops: tuple[str, ...] = ()
    """Ops whose kernels stay in the file although they are no longer generated for it."""


def update_kernel_file(
    current: str, previous: KernelFileRecord | None, new: KernelFile
) -> MergeResult:
    if has_conflict_markers(current):
        # A conflict from an earlier run, not yet resolved: nothing more is merged into the file,
        # and every run keeps failing until the user resolves it.
        return MergeResult(MergeOutcome.CONFLICT, current)
    generated = new.output.content
    if current == generated:
        return MergeResult(MergeOutcome.UNCHANGED, current)
    if previous is None:
        return MergeResult(MergeOutcome.UNTRACKED, current)
    removed = tuple(sorted(set(previous.heads) - set(new.heads)))
    if generated == previous.base:
        return MergeResult(MergeOutcome.UNCHANGED, current, removed)
    if current == previous.base:
        return MergeResult(MergeOutcome.REGENERATED, generated, removed)
    structural = _structural_update(current, previous.heads, new)
    if structural is not None:
        return MergeResult(MergeOutcome.MERGED, structural, removed)
    return _three_way(previous.base, current, generated, removed)


def _structural_update(
    current: str, old_heads: Mapping[str, str], new: KernelFile
) -> str | None:
    """Replace changed definition lines in place; None when a line to replace is not in the file
    exactly once."""
    lines = current.splitlines(keepends=True)
    for op, new_head in sorted(new.heads.items()):
        old_head = old_heads.get(op)
        if old_head is None or old_head == new_head:
            continue
        positions = [index for index, line in enumerate(lines) if line.startswith(old_head + " ")]
        if len(positions) != 1:
            return None
        index = positions[0]
        lines[index] = new_head + lines[index][len(old_head) :]
    return "".join(lines)


def three_way_merge(base: str, current: str, generated: str) -> tuple[str, bool]:
    """The line-based three-way merge of the user's `current` and the generator's `generated`
    text, both made from `base`: the merged text, and whether it holds conflict markers."""
    merger = merge3.Merge3(
        base.splitlines(keepends=True),
        current.splitlines(keepends=True),
        generated.splitlines(keepends=True),
    )
    merged = "".join(
        merger.merge_lines(
            start_marker=START_MARKER,
            mid_marker="=======",
            end_marker=END_MARKER,
        )
    )
    return merged, any(region[0] == "conflict" for region in merger.merge_regions())


def _three_way(base: str, current: str, generated: str, removed: tuple[str, ...]) -> MergeResult:
    merged, conflicted = three_way_merge(base, current, generated)
    return MergeResult(MergeOutcome.CONFLICT if conflicted else MergeOutcome.MERGED, merged, removed)
