"""`scaffold-backend ops`: every operator and what the backend does with it, as a table or JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any

from ..model.outputs import group_header, kernel_file_name
from ..model.selection import OpStatus, Selection


def wanted_statuses(statuses: Iterable[str], *, show_all: bool) -> set[OpStatus]:
    """The statuses `--status` names; without any, every status but composite (all with `--all`)."""
    wanted = {OpStatus(status) for status in statuses}
    if not wanted:
        wanted = set(OpStatus) if show_all else set(OpStatus) - {OpStatus.COMPOSITE}
    return wanted


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
