"""Selection: which operators the backend registers, and how.

Every operator in the declarations gets exactly one status. Required operators (`dispatch` True,
`default` False: no kernel exists unless the backend brings one) are native kernels, autograd
kernels, explicit per-op CPU fallbacks, or left to the boxed CPU fallback. Operators with a default
kernel are composite (nothing to register) unless the YAML overrides them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..errors import BackendYamlError, DeclarationsError
from ..model.backend import BackendConfig, OpEntry
from ..model.declarations import Declaration, DeclarationsFile
from ..model.selection import AutocastOp, OpStatus, SelectedOp, Selection
from .autocast import autocast_problem


def closest_op_names(op_name: str, known: list[str]) -> list[str]:
    """Likely replacements for an op name that does not exist: overloads of the same op first
    (a removed `sum.dim_DimnameList` -> `sum.dim_IntList`), else the closest names (typos)."""
    base = op_name.split(".", 1)[0]
    same_base = [name for name in known if name.split(".", 1)[0] == base]
    if same_base:
        return difflib.get_close_matches(op_name, same_base, n=3, cutoff=0.0)
    return difflib.get_close_matches(op_name, known, n=3, cutoff=0.75)


def unknown_op_hint(op_name: str, declarations: DeclarationsFile) -> str:
    """The hint for an op name the declarations do not have: the closest names, else where to
    look. Every "unknown operator" message (backend YAML, `init --ops`) uses it."""
    close = closest_op_names(op_name, declarations.op_names())
    if close:
        return f"did you mean {', '.join(repr(name) for name in close)}?"
    return "run `scaffold-backend ops --all` to list the operators of this torch"


def _unknown_op_error(entry: OpEntry, key: str, declarations: DeclarationsFile) -> BackendYamlError:
    hint = unknown_op_hint(entry.op_name, declarations)
    return BackendYamlError(
        f"unknown operator '{entry.op_name}' under {key}: {declarations.description} has no "
        "such operator",
        location=entry.location,
        hint=hint,
    )


def select(config: BackendConfig, declarations: DeclarationsFile) -> Selection:
    listed: dict[str, tuple[str, OpEntry]] = {}

    def resolve(entries: Iterable[OpEntry], key: str, *, exclusive: bool) -> dict[str, Declaration]:
        """Look up every entry; exclusive lists may not name an op that another one names."""
        found: dict[str, Declaration] = {}
        for entry in entries:
            declaration = declarations.get(entry.op_name)
            if declaration is None:
                raise _unknown_op_error(entry, key, declarations)
            if entry.op_name in found:
                raise BackendYamlError(
                    f"'{entry.op_name}' is listed twice under {key}", location=entry.location
                )
            if exclusive:
                previous = listed.get(entry.op_name)
                if previous is not None:
                    raise BackendYamlError(
                        f"'{entry.op_name}' is listed under both {previous[0]} (line "
                        f"{previous[1].location.line}) and {key}",
                        location=entry.location,
                        hint="an op has one status: a kernel (supported or autograd) or an "
                        "explicit fallback",
                    )
                listed[entry.op_name] = (key, entry)
                _require_schema(declaration, entry)
            found[entry.op_name] = declaration
        return found

    policy = config.fallback
    supported = resolve(config.supported, "'supported'", exclusive=True)
    autograd = resolve(config.autograd, "'autograd'", exclusive=True)
    explicit = resolve(policy.explicit, "'fallback.explicit'", exclusive=True)
    never = resolve(policy.never, "'fallback.never'", exclusive=False)
    symint = resolve(config.symint, "'symint'", exclusive=False)

    for entry in policy.never:
        if entry.op_name in explicit:
            raise BackendYamlError(
                f"'{entry.op_name}' is under both 'fallback.never' and 'fallback.explicit'",
                location=entry.location,
            )
    for entry in config.symint:
        if entry.op_name not in supported and entry.op_name not in autograd:
            raise BackendYamlError(
                f"'{entry.op_name}' is under 'symint' but not under 'supported' or 'autograd'",
                location=entry.location,
                hint="'symint' chooses c10::SymInt arguments for kernels you write",
            )
    _check_groups_not_split(config, supported, autograd)

    ops = []
    for declaration in sorted(declarations, key=lambda d: d.op_name):
        name = declaration.op_name
        if name in supported:
            status = OpStatus.NATIVE
        elif name in autograd:
            status = OpStatus.AUTOGRAD
        elif name in explicit:
            status = OpStatus.EXPLICIT_FALLBACK
        elif declaration.required:
            status = OpStatus.BOXED_FALLBACK
        else:
            status = OpStatus.COMPOSITE
        ops.append(
            SelectedOp(
                declaration=declaration,
                status=status,
                symint=name in symint,
                never_fallback=name in never,
            )
        )
    return Selection(
        config=config, declarations=declarations, ops=tuple(ops), autocast=_resolve_autocast(config, declarations)
    )


def _resolve_autocast(config: BackendConfig, declarations: DeclarationsFile) -> tuple[AutocastOp, ...]:
    """The `autocast:` section checked: every op exists, is named once, and can join a list."""
    found: dict[str, AutocastOp] = {}
    for entry in config.autocast:
        key = f"'autocast.{entry.policy.value}'"
        declaration = declarations.get(entry.op.op_name)
        if declaration is None:
            raise _unknown_op_error(entry.op, key, declarations)
        _require_schema(declaration, entry.op)
        previous = found.get(entry.op.op_name)
        if previous is not None:
            raise BackendYamlError(
                f"'{entry.op.op_name}' is listed twice in 'autocast' (first under "
                f"'autocast.{previous.policy.value}' at line {previous.location.line})",
                location=entry.op.location,
                hint="an op is on one autocast list",
            )
        problem = autocast_problem(declaration)
        if problem is not None:
            raise BackendYamlError(f"{problem[0]} ({key})", location=entry.op.location, hint=problem[1])
        found[entry.op.op_name] = AutocastOp(declaration, entry.policy, entry.op.location)
    return tuple(found[name] for name in sorted(found))


def _require_schema(declaration: Declaration, entry: OpEntry) -> None:
    try:
        declaration.require_schema()
    except DeclarationsError as error:
        raise BackendYamlError(
            error.message, location=entry.location, hint=f"declared at {declaration.location}"
        ) from None


def _check_groups_not_split(
    config: BackendConfig, supported: dict[str, Declaration], autograd: dict[str, Declaration]
) -> None:
    """torchgen's rule: the functional, inplace and out variants of an op (same signature once
    overload names and out arguments are stripped) register to one key, never split between the
    backend key and its autograd key."""
    if not supported or not autograd:
        return
    supported_by_signature = {
        str(declaration.require_schema().signature()): name
        for name, declaration in sorted(supported.items())
    }
    entries = {entry.op_name: entry for entry in config.autograd}
    for name, declaration in sorted(autograd.items()):
        partner = supported_by_signature.get(str(declaration.require_schema().signature()))
        if partner is not None:
            raise BackendYamlError(
                f"'{name}' is under 'autograd' but its variant '{partner}' is under 'supported'",
                location=entries[name].location,
                hint="all variants of an op (functional, inplace, out) must go to one key: "
                "move them together under 'supported' or under 'autograd'",
            )
