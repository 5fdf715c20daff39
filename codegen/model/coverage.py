"""A coverage report (`python -m torch_<name>.coverage --json`) as the model holds it: what
`adopt` reads. The runtime writes the report (runtime/python/torch_foo/coverage/report.py holds
the format, version 1); parse/coverage_report.py reads and validates it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TypeAlias

from ..errors import SourceLocation

REPORT_VERSION = 1
"""The report format this generator reads (the runtime's coverage/report.py REPORT_VERSION)."""

ArgumentValue: TypeAlias = None | bool | int | float | str | list["ArgumentValue"] | dict[str, "ArgumentValue"]
"""A recorded argument: JSON values, a tensor as {"tensor": index}, typed values as one-key
objects ({"dtype": "float32"}, ...); parse/coverage_report.py checks every form."""


class OpPath(enum.Enum):
    """How an op that reached the device ran, as the runtime saw it."""

    FALLBACK = "fallback"
    """No kernel of the backend: the CPU fallback ran it. What `adopt` takes."""
    NATIVE = "native"
    """A kernel of the backend."""
    COMPOSITE = "composite"
    """PyTorch's default kernel, made of other ops (which have rows of their own)."""
    CUSTOM = "custom"
    """An op of another namespace than aten with a device kernel."""
    OTHER = "other"
    """Reached the device and ran by none of the above (e.g. the fallback refused it)."""


@dataclass(frozen=True)
class CallSignature:
    """One distinct way the op was called: its tensors' shapes and dtypes, and every argument in
    schema order (tensors as {"tensor": i}, an index into `shapes`)."""

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    arguments: tuple[ArgumentValue, ...]


@dataclass(frozen=True)
class CoveredOp:
    """One row of the report."""

    name: str
    """Qualified: "aten::max_pool2d_with_indices", "aten::add.out"."""
    path: OpPath
    calls: int
    seconds: float
    signatures: tuple[CallSignature, ...]
    location: SourceLocation = field(compare=False)
    """The report, and which row (for messages)."""

    @property
    def namespace(self) -> str:
        return self.name.partition("::")[0]

    @property
    def op_name(self) -> str:
        """As a backend YAML spells it: "max_pool2d_with_indices", "add.out"."""
        return self.name.partition("::")[2]


@dataclass(frozen=True)
class CoverageReport:
    location: SourceLocation
    version: int
    torch: str
    """The torch release the workload ran on ("2.14.1")."""
    device: str
    command: tuple[str, ...]
    """What the workload was: the script and its arguments."""
    ops: tuple[CoveredOp, ...]
    """In the report's order."""

    def ranked_fallback_ops(self) -> list[CoveredOp]:
        """The ops the CPU fallback ran, most seconds first (ties by name): the kernels to write
        next."""
        return sorted(
            (op for op in self.ops if op.path is OpPath.FALLBACK), key=lambda op: (-op.seconds, op.name)
        )

    def find(self, name: str) -> CoveredOp | None:
        """The row of `name`, qualified ("aten::add.out") or as the YAML spells it ("add.out")."""
        qualified = name if "::" in name else f"aten::{name}"
        return next((op for op in self.ops if op.name == qualified), None)
