"""Comparing two RegistrationDeclarations.h files: what a PyTorch upgrade changes for a backend.

Each operator present on either side is classified: added, removed, schema changed (with the
argument-level details), C++ spelling changed while the schema stayed the same (e.g.
`c10::optional` -> `::std::optional`: not a signature change), and dispatch/default flags
flipped (an op becoming required or no longer required). With a backend YAML, the changes are
mapped to the backend's own ops, kernel files and what the user has to do.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from torchgen.model import Argument, FunctionSchema

from ..api.signatures import kernel_binding
from ..model import ident
from ..model.backend import BackendConfig, FallbackDefault
from ..model.declarations import Declaration, DeclarationsFile
from ..model.outputs import DEFAULT_KERNELS_DIR_NAME, kernel_file_display
from ..select.selection import closest_op_names


class ChangeKind(enum.Enum):
    """How an op differs between the two headers; the values are the JSON report's `kinds`."""

    ADDED = "added"
    REMOVED = "removed"
    SCHEMA = "schema"
    SPELLING = "spelling"
    """Same schema, different C++ text in the header."""
    FLAGS = "flags"


class FlagChange(enum.Enum):
    """What a dispatch/default flip means for a backend; the values are the JSON report's
    `flag_change` (diff_report.py says it in words)."""

    BECAME_REQUIRED = "became required"
    NO_LONGER_REQUIRED = "no longer required"
    OTHER = "flags changed"
    """dispatch/default flipped without changing whether a backend must register the op."""


class SchemaChangeKind(enum.Enum):
    RENAMED = "renamed"
    """An argument renamed: same position, same type."""
    ARGUMENT_REMOVED = "argument removed"
    ARGUMENT_ADDED = "argument added"
    TYPE = "type"
    DEFAULT = "default"
    PASSING = "passing"
    """An argument moved between positional, keyword-only and out."""
    REORDERED = "reordered"
    RETURNS = "returns"
    OTHER = "other"
    """The schemas differ in a way none of the above describes."""
    UNREADABLE = "unreadable"
    """The schema text changed and the installed torchgen cannot read one side."""


class ArgumentPassing(enum.Enum):
    POSITIONAL = "positional"
    KEYWORD_ONLY = "keyword-only"
    OUT = "out"


@dataclass(frozen=True)
class SchemaDifference:
    """One argument-level difference between two schemas of an op (diff_report.py says it in
    words, e.g. "argument 'diagonal': int -> SymInt")."""

    kind: SchemaChangeKind
    argument: str | None = None
    before: str | None = None
    """The argument's type, default or passing (or the returns, the schema) before; for RENAMED
    nothing, the old name being `argument`."""
    after: str | None = None
    """The same after; for RENAMED the new name, for ARGUMENT_ADDED the type, for UNREADABLE
    torchgen's error."""
    default: str | None = None
    """For ARGUMENT_ADDED: the new argument's default, if it has one."""
    passing: ArgumentPassing | None = None
    """For ARGUMENT_ADDED: how the new argument is passed."""


@dataclass(frozen=True)
class OpChange:
    op_name: str
    old: Declaration | None
    new: Declaration | None
    schema_changes: tuple[SchemaDifference, ...] = ()
    spelling_changed: bool = False
    """Same schema, different C++ text in the header."""
    flag_change: FlagChange | None = None

    @property
    def added(self) -> bool:
        return self.old is None

    @property
    def removed(self) -> bool:
        return self.new is None

    @property
    def kinds(self) -> tuple[ChangeKind, ...]:
        if self.added:
            return (ChangeKind.ADDED,)
        if self.removed:
            return (ChangeKind.REMOVED,)
        kinds = []
        if self.schema_changes:
            kinds.append(ChangeKind.SCHEMA)
        if self.spelling_changed:
            kinds.append(ChangeKind.SPELLING)
        if self.flag_change is not None:
            kinds.append(ChangeKind.FLAGS)
        return tuple(kinds)


@dataclass(frozen=True)
class DeclarationsDiff:
    old: DeclarationsFile
    new: DeclarationsFile
    changes: tuple[OpChange, ...]
    """Every op that differs in any way, sorted by name."""

    def of_kind(self, kind: ChangeKind) -> list[OpChange]:
        return [change for change in self.changes if kind in change.kinds]

    def get(self, op_name: str) -> OpChange | None:
        return next((change for change in self.changes if change.op_name == op_name), None)


def diff_declarations(old: DeclarationsFile, new: DeclarationsFile) -> DeclarationsDiff:
    changes = []
    for name in sorted(set(old.op_names()) | set(new.op_names())):
        before, after = old.get(name), new.get(name)
        if before is None or after is None:
            changes.append(OpChange(name, before, after))
            continue
        change = _compare(name, before, after)
        if change is not None:
            changes.append(change)
    return DeclarationsDiff(old, new, tuple(changes))


def _compare(name: str, old: Declaration, new: Declaration) -> OpChange | None:
    schema_changes: tuple[SchemaDifference, ...] = ()
    if old.schema_text != new.schema_text:
        if old.schema is not None and new.schema is not None:
            schema_changes = schema_differences(old.schema, new.schema)
        else:
            unreadable = old if old.schema is None else new
            schema_changes = (
                SchemaDifference(SchemaChangeKind.UNREADABLE, after=str(unreadable.schema_error)),
            )
    spelling = not schema_changes and old.cpp_declaration != new.cpp_declaration
    flag_change = None
    if (old.dispatch, old.default) != (new.dispatch, new.default):
        if new.required and not old.required:
            flag_change = FlagChange.BECAME_REQUIRED
        elif old.required and not new.required:
            flag_change = FlagChange.NO_LONGER_REQUIRED
        else:
            flag_change = FlagChange.OTHER
    if not schema_changes and not spelling and flag_change is None:
        return None
    return OpChange(name, old, new, schema_changes, spelling, flag_change)


def _passing(schema: FunctionSchema, argument: Argument) -> ArgumentPassing:
    arguments = schema.arguments
    if argument in arguments.out:
        return ArgumentPassing.OUT
    if argument in arguments.flat_kwarg_only:
        return ArgumentPassing.KEYWORD_ONLY
    return ArgumentPassing.POSITIONAL


def schema_differences(old: FunctionSchema, new: FunctionSchema) -> tuple[SchemaDifference, ...]:
    """Argument-level differences between two schemas of the same operator."""
    if str(old) == str(new):
        return ()
    details: list[SchemaDifference] = []
    old_arguments = list(old.arguments.flat_all)
    new_arguments = list(new.arguments.flat_all)
    old_by_name = {a.name: a for a in old_arguments}
    new_by_name = {a.name: a for a in new_arguments}
    removed = [a for a in old_arguments if a.name not in new_by_name]
    added = [a for a in new_arguments if a.name not in old_by_name]
    # A removed and an added argument at the same position with the same type is a rename.
    for gone in list(removed):
        position = old_arguments.index(gone)
        candidate = new_arguments[position] if position < len(new_arguments) else None
        if candidate in added and candidate is not None and str(candidate.type) == str(gone.type):
            details.append(SchemaDifference(SchemaChangeKind.RENAMED, gone.name, after=candidate.name))
            removed.remove(gone)
            added.remove(candidate)
    for argument in removed:
        details.append(SchemaDifference(SchemaChangeKind.ARGUMENT_REMOVED, argument.name, before=str(argument.type)))
    for argument in added:
        details.append(
            SchemaDifference(
                SchemaChangeKind.ARGUMENT_ADDED,
                argument.name,
                after=str(argument.type),
                default=argument.default,
                passing=_passing(new, argument),
            )
        )
    for before in old_arguments:
        after = new_by_name.get(before.name)
        if after is None:
            continue
        if str(before.type) != str(after.type):
            details.append(SchemaDifference(SchemaChangeKind.TYPE, before.name, str(before.type), str(after.type)))
        if before.default != after.default:
            details.append(SchemaDifference(SchemaChangeKind.DEFAULT, before.name, before.default, after.default))
        if _passing(old, before) is not _passing(new, after):
            details.append(
                SchemaDifference(
                    SchemaChangeKind.PASSING, before.name, _passing(old, before).value, _passing(new, after).value
                )
            )
    kept_old = [a.name for a in old_arguments if a.name in new_by_name]
    kept_new = [a.name for a in new_arguments if a.name in old_by_name]
    if kept_old != kept_new:
        details.append(SchemaDifference(SchemaChangeKind.REORDERED))
    old_returns = ", ".join(str(r) for r in old.returns)
    new_returns = ", ".join(str(r) for r in new.returns)
    if old_returns != new_returns:
        details.append(SchemaDifference(SchemaChangeKind.RETURNS, before=old_returns, after=new_returns))
    if not details:
        details.append(SchemaDifference(SchemaChangeKind.OTHER, before=str(old), after=str(new)))
    return tuple(details)


# ---------------------------------------------------------------------------------------------
# What the changes mean for one backend
# ---------------------------------------------------------------------------------------------


class ImpactKind(enum.Enum):
    """What a change means for one of the backend's ops (diff_report.py says it in words)."""

    REMOVED = "removed"
    """The op is gone from PyTorch; the YAML still names it."""
    NEW_REQUIRED = "new required"
    """A new op every backend must register; this one does not yet."""
    PARAMETERS_RENAMED = "parameters renamed"
    """The kernel's parameter names changed, its types did not."""
    WRAPPER_ADAPTS = "wrapper adapts"
    """The schema changed, the kernel's signature did not."""
    SIGNATURE_CHANGED = "signature changed"
    """The kernel's signature changes: regeneration merges it into the user's file."""
    FALLBACK_WRAPPER = "fallback wrapper"
    """The schema of an explicitly fallen-back op changed: its wrapper is regenerated."""
    BECAME_REQUIRED = "became required"
    """An op the backend does not list lost its default kernel."""
    NO_LONGER_REQUIRED = "no longer required"
    """An op the backend implements gained a default kernel."""


@dataclass(frozen=True)
class BackendImpact:
    op_name: str
    listed_under: str | None
    """The YAML key naming the op, or None for an op the backend does not mention."""
    kind: ImpactKind
    kernel_file: str | None = None
    yaml_path: str = ""
    """The backend YAML, as it is shown (relative)."""
    replacement: str | None = None
    """For a removed op: the op in the new header most likely to replace it."""
    falls_back: bool = False
    """For an op the backend does not implement: whether it runs on the CPU (fallback.default: cpu)."""
    kernel_before: str | None = None
    kernel_after: str | None = None
    """The kernel's C++ declaration before and after, where its signature is involved."""


def likely_replacement(op_name: str, new: DeclarationsFile) -> str | None:
    """The op in the new header most likely to replace a removed one."""
    close = closest_op_names(op_name, new.op_names())
    return close[0] if close else None


def _listed_keys(config: BackendConfig) -> dict[str, str]:
    keys: dict[str, str] = {}
    for key, entries in (
        ("supported", config.supported),
        ("autograd", config.autograd),
        ("fallback.explicit", config.fallback.explicit),
        ("fallback.never", config.fallback.never),
    ):
        for entry in entries:
            keys.setdefault(entry.op_name, key)
    return keys


def _kernel_declaration(declaration: Declaration, symint: bool, config: BackendConfig) -> str | None:
    if declaration.schema is None:
        return None
    return kernel_binding(declaration, symint=symint, config=config).kernel_declaration()


def _kernel_types(declaration: Declaration, symint: bool, config: BackendConfig) -> str | None:
    if declaration.schema is None:
        return None
    return kernel_binding(declaration, symint=symint, config=config).type_signature()


def backend_impact(
    diff: DeclarationsDiff, config: BackendConfig, kernels_dir_name: str = DEFAULT_KERNELS_DIR_NAME
) -> list[BackendImpact]:
    listed = _listed_keys(config)
    symint = {entry.op_name for entry in config.symint}
    falls_back = config.fallback.default is FallbackDefault.CPU
    impacts = []
    for change in diff.changes:
        key = listed.get(change.op_name)
        declaration = change.new or change.old
        assert declaration is not None
        is_kernel = key in ("supported", "autograd")
        kernel_file = kernel_file_display(kernels_dir_name, ident.stub_group(declaration.name)) if is_kernel else None
        if change.removed:
            if key is None:
                continue
            impacts.append(BackendImpact(
                change.op_name, key, ImpactKind.REMOVED, kernel_file, config.display_path,
                replacement=likely_replacement(change.op_name, diff.new),
            ))
            continue
        if change.added:
            assert change.new is not None
            if change.new.required and key is None:
                impacts.append(BackendImpact(change.op_name, None, ImpactKind.NEW_REQUIRED, falls_back=falls_back))
            continue
        assert change.old is not None and change.new is not None
        if is_kernel and change.schema_changes:
            uses_symint = change.op_name in symint
            before = _kernel_declaration(change.old, uses_symint, config)
            after = _kernel_declaration(change.new, uses_symint, config)
            if before is not None and before != after and _kernel_types(
                change.old, uses_symint, config
            ) == _kernel_types(change.new, uses_symint, config):
                kind = ImpactKind.PARAMETERS_RENAMED
            elif before is not None and before == after:
                kind = ImpactKind.WRAPPER_ADAPTS
            else:
                kind = ImpactKind.SIGNATURE_CHANGED
            impacts.append(BackendImpact(
                change.op_name, key, kind, kernel_file, kernel_before=before, kernel_after=after
            ))
        elif key == "fallback.explicit" and change.schema_changes:
            impacts.append(BackendImpact(change.op_name, key, ImpactKind.FALLBACK_WRAPPER))
        if change.flag_change is FlagChange.BECAME_REQUIRED and key is None:
            impacts.append(BackendImpact(change.op_name, None, ImpactKind.BECAME_REQUIRED, falls_back=falls_back))
        if change.flag_change is FlagChange.NO_LONGER_REQUIRED and is_kernel:
            impacts.append(BackendImpact(change.op_name, key, ImpactKind.NO_LONGER_REQUIRED, kernel_file))
    return impacts


def summary_counts(diff: DeclarationsDiff) -> dict[str, int]:
    added = diff.of_kind(ChangeKind.ADDED)
    return {
        "added": len(added),
        "added_required": sum(1 for change in added if change.new is not None and change.new.required),
        "removed": len(diff.of_kind(ChangeKind.REMOVED)),
        "schema_changed": len(diff.of_kind(ChangeKind.SCHEMA)),
        "spelling_only": len(diff.of_kind(ChangeKind.SPELLING)),
        "flags_flipped": len(diff.of_kind(ChangeKind.FLAGS)),
        "became_required": sum(1 for c in diff.changes if c.flag_change is FlagChange.BECAME_REQUIRED),
        "no_longer_required": sum(1 for c in diff.changes if c.flag_change is FlagChange.NO_LONGER_REQUIRED),
    }
