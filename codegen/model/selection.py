"""The selection: what the backend does with every operator of the declarations (its status), and
the ops the YAML adds to the autocast lists. select/selection.py computes it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..errors import SourceLocation
from . import ident
from .backend import AutocastPolicy, BackendConfig
from .declarations import Declaration, DeclarationsFile


class OpStatus(enum.Enum):
    NATIVE = "native"
    """A kernel in the backend's C++ namespace, registered to the backend key."""
    AUTOGRAD = "autograd"
    """A kernel registered to Autograd<backend>: the backend implements autograd itself."""
    EXPLICIT_FALLBACK = "explicit-fallback"
    """A generated, typed wrapper that runs the op on the CPU."""
    BOXED_FALLBACK = "boxed-fallback"
    """No registration: the backend-wide boxed fallback handles it (CPU or error, by policy)."""
    COMPOSITE = "composite"
    """PyTorch has a default kernel built from other ops; nothing to register."""


KERNEL_STATUSES = (OpStatus.NATIVE, OpStatus.AUTOGRAD)


@dataclass(frozen=True)
class SelectedOp:
    declaration: Declaration
    status: OpStatus
    symint: bool
    """The kernel takes c10::SymInt (listed under `symint`) rather than int64_t."""
    never_fallback: bool
    """Listed under `fallback.never`: reaching the boxed fallback raises an error."""

    @property
    def op_name(self) -> str:
        return self.declaration.op_name

    @property
    def override(self) -> bool:
        """The YAML registers a kernel for an op that PyTorch could already run by default."""
        return not self.declaration.required and self.status not in (
            OpStatus.COMPOSITE,
            OpStatus.BOXED_FALLBACK,
        )

    @property
    def group(self) -> str:
        return ident.stub_group(self.declaration.name)

    @property
    def notes(self) -> tuple[str, ...]:
        notes = []
        if self.override:
            notes.append("override of a default kernel")
        if self.declaration.default_raises:
            notes.append(
                "default kernel only raises for this backend"
                + ("; the CPU fallback cannot run it: write a kernel"
                   if self.status is OpStatus.BOXED_FALLBACK else "")
            )
        if self.never_fallback:
            notes.append("never falls back")
        if self.symint:
            notes.append("symint")
        if self.declaration.schema is None:
            notes.append("schema not readable by the installed torchgen")
        return tuple(notes)


@dataclass(frozen=True)
class Selection:
    config: BackendConfig
    declarations: DeclarationsFile
    ops: tuple[SelectedOp, ...]
    """Every declared operator, sorted by name."""
    autocast: tuple[AutocastOp, ...] = ()
    """The ops the YAML adds to the autocast lists, sorted by name."""

    def with_status(self, *statuses: OpStatus) -> list[SelectedOp]:
        return [op for op in self.ops if op.status in statuses]

    @property
    def kernels(self) -> list[SelectedOp]:
        """Ops whose kernels the user writes (native and autograd), sorted by name."""
        return self.with_status(*KERNEL_STATUSES)


@dataclass(frozen=True)
class AutocastOp:
    """An op of the `autocast:` section, resolved: its declaration and the list it joins."""

    declaration: Declaration
    policy: AutocastPolicy
    location: SourceLocation = field(compare=False)

    @property
    def op_name(self) -> str:
        return self.declaration.op_name
