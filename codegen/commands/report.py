"""What the commands print: the `ops` listing (a table or JSON) and the change reports of
`generate` and `init`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..model.outputs import group_header, kernel_file_name
from ..parse.inputs import display_path
from ..paths import display_paths
from ..select.selection import OpStatus, Selection
from ..write.merge import MergeOutcome
from ..write.plan import Action
from ..write.uptodate import orphan_note
from .generate import GenerateResult
from .init.project import InitResult


def ops_rows(selection: Selection, statuses: Collection[OpStatus]) -> list[dict[str, Any]]:
    """One row per op with a wanted status, sorted by op name. The JSON form is stable: keys and
    their meaning only ever get added to."""
    rows = []
    for op in selection.ops:
        if op.status not in statuses:
            continue
        declaration = op.declaration
        rows.append(
            {
                "op": op.op_name,
                "status": op.status.value,
                "required": declaration.required,
                "dispatch": declaration.dispatch,
                "default": declaration.default,
                "kernel_file": (
                    kernel_file_name(op.group) if op.status in (OpStatus.NATIVE, OpStatus.AUTOGRAD) else None
                ),
                "declaration_header": (
                    group_header(op.group)
                    if op.status in (OpStatus.NATIVE, OpStatus.AUTOGRAD)
                    else None
                ),
                "notes": list(op.notes),
                "line": declaration.location.line,
            }
        )
    return rows


def ops_table(selection: Selection, rows: list[dict[str, Any]]) -> str:
    headings = ("OP", "STATUS", "KERNEL FILE", "NOTES")
    table = [
        (row["op"], row["status"], row["kernel_file"] or "-", "; ".join(row["notes"]) or "-")
        for row in rows
    ]
    widths = [max([len(heading)] + [len(line[i]) for line in table]) for i, heading in enumerate(headings)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(headings, widths, strict=True)).rstrip()]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in table]
    counts = Counter(op.status for op in selection.ops)
    required = sum(1 for op in selection.ops if op.declaration.required)
    summary = ", ".join(f"{counts[status]} {status.value}" for status in OpStatus)
    lines.append("")
    lines.append(
        f"{len(selection.ops)} ops in {selection.declarations.description}, {required} required; "
        f"{summary}. Backend YAML: {selection.config.display_path}; fallback default: "
        f"{selection.config.fallback.default.value}."
    )
    return "\n".join(lines) + "\n"


def generate_report(result: GenerateResult, root: Path, *, planned: bool) -> tuple[list[str], list[str]]:
    """What `generate` prints: one line per file change (stdout), then notes about kernel files
    the user has to look at (stderr)."""
    verbs = {
        Action.CREATE: "create" if planned else "created",
        Action.UPDATE: "update" if planned else "updated",
        Action.DELETE: "delete" if planned else "deleted",
        Action.MERGE: "merge" if planned else "merged",
        Action.CONFLICT: "conflict",
    }
    changes = result.plan.changes
    lines = [
        f"{verbs[change.action]:>9}  {shown}"
        for change, shown in zip(changes, display_paths([change.path for change in changes], root), strict=True)
    ]
    notes = []
    for path, merge in sorted(result.merges.items()):
        shown = display_path(path, root)
        if merge.outcome is MergeOutcome.UNTRACKED:
            notes.append(f"warning: {shown} is not in the manifest; left as it is")
        if merge.removed_ops:
            notes.append(
                f"note: {shown} still defines kernels for {', '.join(merge.removed_ops)}, which are "
                "no longer generated; they are kept (delete them when you no longer need them)"
            )
    for path, ops in sorted(result.kept_parameter_names.items()):
        notes.append(
            f"note: {display_path(path, root)} keeps your parameter names for {', '.join(ops)}: "
            "PyTorch renamed parameters but kept their types, so your definition lines still match"
        )
    for relative in result.orphaned:
        shown = display_path(result.layout.out_dir / relative, root)
        notes.append(orphan_note(shown))
    kernels = len(result.selection.kernels)
    if result.plan:
        lines.append(f"{kernels} kernel(s), {len(result.plan.changes)} file(s) {'to change' if planned else 'changed'}")
    else:
        lines.append(f"{kernels} kernel(s), everything up to date")
    return lines, notes


def init_report(result: InitResult, cwd: Path, *, dry_run: bool) -> list[str]:
    shown = display_path(result.target, cwd)
    verb = "would create" if dry_run else "created"
    lines = [f"{verb:>12}  {shown}/{relative}" for relative in result.created]
    lines += [f"{'kept':>12}  {shown}/{relative} (exists; left as it is)" for relative in result.kept]
    if not dry_run:
        lines += ["", f"Next: cd {shown} && {result.setup_command}"]
    return lines
