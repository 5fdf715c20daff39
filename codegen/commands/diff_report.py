"""Rendering a DeclarationsDiff: text for terminals, markdown short enough for a PR
description, JSON stable for tools (keys are only ever added)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .diff import (
    BackendImpact,
    ChangeKind,
    DeclarationsDiff,
    FlagChange,
    ImpactKind,
    OpChange,
    SchemaChangeKind,
    SchemaDifference,
    summary_counts,
)

# Markdown lists longer than this fold into a <details> block so the PR text stays readable.
MARKDOWN_FOLD = 12
# A GitHub pull-request description holds 65,536 characters; the report stays below it for any
# jump. What the backend must do comes first and in full; other lists show as many entries as
# SECTION_BUDGET characters hold and count the rest (the JSON format keeps everything).
MARKDOWN_LIMIT = 65_536
SECTION_BUDGET = 6_000
# Ops the backend does not list (new required ops that will fall back) are named up to this many
# per row of the backend table; the ops it lists are always named.
UNLISTED_NAMES = 40


FLAG_CHANGE_TEXT = {
    FlagChange.BECAME_REQUIRED: "became required",
    FlagChange.NO_LONGER_REQUIRED: "no longer required",
    FlagChange.OTHER: "flags changed",
}


def flags_text(change: OpChange) -> str:
    """The flags of an op on both sides, e.g. "dispatch False -> True, default True -> True"."""
    assert change.old is not None and change.new is not None
    return (
        f"dispatch {change.old.dispatch} -> {change.new.dispatch}, "
        f"default {change.old.default} -> {change.new.default}"
    )


def schema_difference_text(difference: SchemaDifference) -> str:
    """One schema difference in words (the JSON report's `schema_changes` entries)."""
    kind, name = difference.kind, difference.argument
    if kind is SchemaChangeKind.RENAMED:
        return f"argument '{name}' renamed to '{difference.after}'"
    if kind is SchemaChangeKind.ARGUMENT_REMOVED:
        return f"argument '{name}' ({difference.before}) removed"
    if kind is SchemaChangeKind.ARGUMENT_ADDED:
        default = f" = {difference.default}" if difference.default is not None else ""
        passing = difference.passing.value if difference.passing is not None else ""
        return f"argument '{name}' ({difference.after}{default}, {passing}) added"
    if kind is SchemaChangeKind.TYPE:
        return f"argument '{name}': {difference.before} -> {difference.after}"
    if kind is SchemaChangeKind.DEFAULT:
        return f"argument '{name}': default {difference.before} -> {difference.after}"
    if kind is SchemaChangeKind.PASSING:
        return f"argument '{name}': {difference.before} -> {difference.after}"
    if kind is SchemaChangeKind.REORDERED:
        return "arguments reordered"
    if kind is SchemaChangeKind.RETURNS:
        return f"returns: ({difference.before}) -> ({difference.after})"
    if kind is SchemaChangeKind.UNREADABLE:
        return f"schema text changed (the installed torchgen cannot read one side: {difference.after})"
    assert kind is SchemaChangeKind.OTHER
    return f"schema: {difference.before} -> {difference.after}"


def schema_change_texts(change: OpChange) -> list[str]:
    return [schema_difference_text(difference) for difference in change.schema_changes]


def _unimplemented(impact: BackendImpact) -> str:
    if impact.falls_back:
        return "runs on the CPU through the boxed fallback until you implement it"
    return "raises NotImplementedError (fallback.default: error) until you implement it"


def impact_change(impact: BackendImpact) -> str:
    """What changed for the op, in words (the JSON report's `change`)."""
    kind = impact.kind
    if kind is ImpactKind.REMOVED:
        return "removed from PyTorch"
    if kind is ImpactKind.NEW_REQUIRED:
        return "new op that backends must register"
    if kind is ImpactKind.PARAMETERS_RENAMED:
        return f"parameters renamed only: {impact.kernel_before} -> {impact.kernel_after}"
    if kind is ImpactKind.WRAPPER_ADAPTS:
        return "schema changed; your kernel's signature did not"
    if kind is ImpactKind.SIGNATURE_CHANGED:
        return f"kernel signature changes: {impact.kernel_before} -> {impact.kernel_after}"
    if kind is ImpactKind.FALLBACK_WRAPPER:
        return "schema changed"
    if kind is ImpactKind.BECAME_REQUIRED:
        return "became required (it lost its default kernel)"
    assert kind is ImpactKind.NO_LONGER_REQUIRED
    return "no longer required (PyTorch now has a default kernel)"


def impact_action(impact: BackendImpact) -> str:
    """What the user has to do, in words (the JSON report's `action`)."""
    kind = impact.kind
    if kind is ImpactKind.REMOVED:
        hint = f"; likely replacement: '{impact.replacement}'" if impact.replacement else ""
        kept = "; its kernel stays in the file and is reported until you delete it" if impact.kernel_file else ""
        return f"remove it from '{impact.listed_under}' in {impact.yaml_path}{hint}{kept}"
    if kind in (ImpactKind.NEW_REQUIRED, ImpactKind.BECAME_REQUIRED):
        return _unimplemented(impact)
    if kind is ImpactKind.PARAMETERS_RENAMED:
        return (
            "regenerate: your kernel keeps its parameter names (the types are unchanged, "
            "so your definition still matches)"
        )
    if kind is ImpactKind.WRAPPER_ADAPTS:
        return "regenerate: the generated wrapper adapts (e.g. converts SymInt to int64_t)"
    if kind is ImpactKind.SIGNATURE_CHANGED:
        return "regenerate: the new signature is merged into your kernel file; review the body"
    if kind is ImpactKind.FALLBACK_WRAPPER:
        return "regenerate: the wrapper is regenerated"
    assert kind is ImpactKind.NO_LONGER_REQUIRED
    return "your kernel still overrides the default; keep it for speed or remove it"


def _side(diff: DeclarationsDiff, old: bool) -> str:
    return (diff.old if old else diff.new).description


def _required(change: OpChange) -> str:
    declaration = change.new or change.old
    return " [required]" if declaration is not None and declaration.required else ""


def _lines(diff: DeclarationsDiff) -> dict[str, list[tuple[str, str]]]:
    """Section title -> (op, detail) per op, shared by the text and markdown renderings."""
    return {
        "Added": [(c.op_name, _required(c)) for c in diff.of_kind(ChangeKind.ADDED)],
        "Removed": [(c.op_name, _required(c)) for c in diff.of_kind(ChangeKind.REMOVED)],
        "Schema changed": [
            (c.op_name, ": " + "; ".join(schema_change_texts(c))) for c in diff.of_kind(ChangeKind.SCHEMA)
        ],
        "Dispatch/default flags flipped": [
            (c.op_name, f": {FLAG_CHANGE_TEXT[c.flag_change] if c.flag_change else ''} ({flags_text(c)})")
            for c in diff.of_kind(ChangeKind.FLAGS)
        ],
        "C++ spelling only (same schema, not a signature change)": [
            (c.op_name, "") for c in diff.of_kind(ChangeKind.SPELLING)
        ],
    }


def _grouped(impacts: Sequence[BackendImpact]) -> list[tuple[list[BackendImpact], str, str]]:
    """Impacts with the same change and action, merged: one line for sixteen new ops."""
    groups: dict[tuple[str, str], list[BackendImpact]] = {}
    for impact in impacts:
        groups.setdefault((impact_change(impact), impact_action(impact)), []).append(impact)
    return [(members, what, action) for (what, action), members in groups.items()]


def _summary(diff: DeclarationsDiff) -> str:
    counts = summary_counts(diff)
    return (
        f"{counts['added']} added ({counts['added_required']} required), {counts['removed']} removed, "
        f"{counts['schema_changed']} schema changed, {counts['flags_flipped']} flag flips "
        f"({counts['became_required']} became required, {counts['no_longer_required']} no longer required), "
        f"{counts['spelling_only']} C++ spelling only"
    )


def render_text(diff: DeclarationsDiff, impacts: Sequence[BackendImpact] | None, backend: str | None) -> str:
    out = [f"{_side(diff, True)} -> {_side(diff, False)}", _summary(diff)]
    if impacts is not None:
        out.append("")
        out.append(f"Backend {backend}: {len(impacts)} op(s) affected" + (" (nothing to do)" if not impacts else ""))
        for members, what, action in _grouped(impacts):
            names = ", ".join(
                impact.op_name + (f" [{impact.listed_under}]" if impact.listed_under else "")
                for impact in members
            )
            out.append(f"  {names}: {what}")
            out.append(f"      -> {action}")
    for title, lines in _lines(diff).items():
        if lines:
            out.append("")
            out.append(f"{title} ({len(lines)}):")
            out.extend(f"  {op}{detail}" for op, detail in lines)
    return "\n".join(out) + "\n"


def _within_budget(items: Sequence[str], budget: int) -> tuple[list[str], int]:
    """The leading items whose text fits in `budget` characters, and how many are left out."""
    shown: list[str] = []
    used = 0
    for item in items:
        used += len(item) + 2
        if used > budget and shown:
            break
        shown.append(item)
    return shown, len(items) - len(shown)


def _markdown_list(lines: list[tuple[str, str]]) -> list[str]:
    items = [f"`{op}`{detail}" for op, detail in lines]
    if len(items) <= MARKDOWN_FOLD:
        return [f"- {item}" for item in items]
    # Long lists fold into one paragraph, cut at the section's budget: the PR description stays
    # a screen long and within GitHub's limit.
    shown, left_out = _within_budget(items, SECTION_BUDGET)
    folded = ", ".join(shown) + (f", … and {left_out} more" if left_out else "")
    return [f"<details><summary>show all {len(items)}</summary>", "", folded, "", "</details>"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _impact_names(members: Sequence[BackendImpact]) -> str:
    listed = [f"`{i.op_name}` (`{i.listed_under}`)" for i in members if i.listed_under]
    unlisted = [f"`{i.op_name}`" for i in members if not i.listed_under]
    shown = unlisted[:UNLISTED_NAMES]
    more = [f"and {len(unlisted) - len(shown)} more"] if len(unlisted) > len(shown) else []
    return ", ".join(listed + shown + more)


def _truncated(text: str) -> str:
    """The last resort for a report still over the limit: cut at a line, say so."""
    if len(text) <= MARKDOWN_LIMIT:
        return text
    note = "\n\n_The report is cut here to fit a pull request; `--format json` has every change._\n"
    cut = text.rfind("\n", 0, MARKDOWN_LIMIT - len(note) - 1)
    return text[:cut] + note


def render_markdown(diff: DeclarationsDiff, impacts: Sequence[BackendImpact] | None, backend: str | None) -> str:
    out = [
        f"### PyTorch operator changes: `{_side(diff, True)}` → `{_side(diff, False)}`",
        "",
        _summary(diff) + ".",
    ]
    if impacts is not None:
        out += ["", f"#### What this means for `{backend}`", ""]
        if not impacts:
            out.append("Nothing to do: no op the backend registers or relies on changed.")
        else:
            out += ["| ops | change | what to do |", "| --- | --- | --- |"]
            for members, what, action in _grouped(impacts):
                out.append(f"| {_impact_names(members)} | {_cell(what)} | {_cell(action)} |")
    sections = [(title, lines) for title, lines in _lines(diff).items() if lines]
    if sections:
        out += ["", "#### All operator changes", ""]
    for title, lines in sections:
        out += ["", f"**{title}** ({len(lines)})", "", *_markdown_list(lines)]
    if any(len(lines) > MARKDOWN_FOLD for _, lines in sections):
        out += ["", "_Long lists are shortened; `scaffold-backend diff --format json` lists every change._"]
    return _truncated("\n".join(out) + "\n")


def _declaration_json(change: OpChange, old: bool) -> dict[str, Any] | None:
    declaration = change.old if old else change.new
    if declaration is None:
        return None
    return {
        "schema": declaration.schema_text,
        "cpp": declaration.cpp_declaration,
        "dispatch": declaration.dispatch,
        "default": declaration.default,
        "required": declaration.required,
    }


def render_json(diff: DeclarationsDiff, impacts: Sequence[BackendImpact] | None, backend: str | None) -> str:
    document: dict[str, Any] = {
        "old": {"path": diff.old.display_path, "torch_version": diff.old.torch_version},
        "new": {"path": diff.new.display_path, "torch_version": diff.new.torch_version},
        "summary": summary_counts(diff),
        "ops": [
            {
                "op": change.op_name,
                "kinds": [kind.value for kind in change.kinds],
                "schema_changes": schema_change_texts(change),
                "flag_change": change.flag_change.value if change.flag_change else None,
                "old": _declaration_json(change, True),
                "new": _declaration_json(change, False),
            }
            for change in diff.changes
        ],
    }
    if impacts is not None:
        document["backend"] = {
            "yaml": backend,
            "impacts": [
                {
                    "op": impact.op_name,
                    "listed_under": impact.listed_under,
                    "change": impact_change(impact),
                    "action": impact_action(impact),
                    "kernel_file": impact.kernel_file,
                }
                for impact in impacts
            ],
        }
    return json.dumps(document, indent=2) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
