"""The declarations header as the model holds it: frozen dataclasses, one per entry.

`RegistrationDeclarations.h` (shipped in every torch wheel) lists one operator per line:

    at::Tensor & add_out(const at::Tensor & self, ...); // {"schema": "aten::add.out(...) -> ...",
        "dispatch": "True", "default": "False"}     (one line in the file)

A `Declaration` keeps each part of such a line: the C++ declaration text (the reference for the
dispatcher signature), the schema parsed by torchgen's `FunctionSchema`, the two flags, and the
line it came from. `str(declaration)` reproduces the line byte for byte; parse/declarations.py
reads it. Everything downstream takes these objects, never dicts of strings.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from torchgen.model import FunctionSchema, OperatorName

from ..errors import DeclarationsError, SourceLocation
from .raising_defaults import RAISING_DEFAULT_KERNELS

ENTRY_SEPARATOR = "; // "
"""The separator between the C++ declaration and its JSON metadata on every entry line."""
SCHEMA_NAMESPACE = "aten::"
"""What every entry's schema starts with (and `schema_text` leaves out)."""

ParsedSchema = tuple[FunctionSchema | None, str | None]
"""An entry's schema, or None and why torchgen could not parse it."""


@dataclass(frozen=True)
class Declaration:
    """One operator entry of RegistrationDeclarations.h."""

    cpp_declaration: str
    """The C++ declaration as written in the header, without the trailing `;`."""
    schema_text: str
    """The schema without its `aten::` prefix, e.g. `add.out(Tensor self, ...) -> Tensor(a!)`."""
    name: OperatorName
    dispatch: bool
    default: bool
    location: SourceLocation = field(compare=False)

    schema_parser: Callable[[Declaration], ParsedSchema] = field(compare=False, repr=False)
    """What turns `schema_text` into torchgen's FunctionSchema (parse/declarations.py), asked on
    first use: a generation needs the schemas of the few hundred ops it emits code for, not of
    all ~3100 entries (parsing them all costs a quarter second)."""

    @functools.cached_property
    def _parsed(self) -> ParsedSchema:
        return self.schema_parser(self)

    @property
    def parsed(self) -> ParsedSchema | None:
        """The schema and error `_parsed` computed, or None while it has not been asked for."""
        parsed: ParsedSchema | None = self.__dict__.get("_parsed")
        return parsed

    def adopt_parsed(self, parsed: ParsedSchema) -> None:
        """Take `_parsed` from api/schema_cache.py, which keeps what it computed for this entry's
        text under the header's digest and the installed torchgen: parsing again would give the
        same. (functools.cached_property keeps its value in the instance dictionary too.)"""
        self.__dict__["_parsed"] = parsed

    @property
    def schema(self) -> FunctionSchema | None:
        """None when the installed torchgen cannot parse this schema (see `schema_error`)."""
        return self._parsed[0]

    @property
    def schema_error(self) -> str | None:
        return self._parsed[1]

    @functools.cached_property
    def op_name(self) -> str:
        """The operator name as backend YAMLs spell it: `add.out`, `abs`. Kept once computed:
        a generation asks ~20 times per op, and torchgen builds the string anew each time."""
        return str(self.name)

    @property
    def default_raises(self) -> bool:
        """The default kernel only raises for an out-of-tree backend (see raising_defaults)."""
        return self.op_name in RAISING_DEFAULT_KERNELS

    @property
    def required(self) -> bool:
        """A backend must register a kernel (or rely on the fallback): no default kernel exists,
        or the default one only raises for an out-of-tree backend."""
        return self.dispatch and (not self.default or self.default_raises)

    def require_schema(self) -> FunctionSchema:
        if self.schema is None:
            raise DeclarationsError(
                f"the schema of '{self.op_name}' cannot be parsed by the installed torchgen: "
                f"{self.schema_error}",
                location=self.location,
                hint="this header comes from a different torch release than the installed one; "
                "generate kernels for this op against a header from the installed torch",
            )
        return self.schema

    def __str__(self) -> str:
        metadata = {
            "schema": SCHEMA_NAMESPACE + self.schema_text,
            "dispatch": str(self.dispatch),
            "default": str(self.default),
        }
        return f"{self.cpp_declaration}{ENTRY_SEPARATOR}{json.dumps(metadata)}"



@dataclass(frozen=True)
class DeclarationsFile:
    """All entries of one RegistrationDeclarations.h, in file order, indexed by operator name."""

    display_path: str
    """How generated files name this input: a relative path, never an absolute one."""
    sha256: str
    torch_version: str | None
    """The torch release the header belongs to, when known (the installed torch's own header)."""
    declarations: tuple[Declaration, ...]
    _by_name: Mapping[str, Declaration] = field(compare=False, repr=False)

    def __iter__(self) -> Iterator[Declaration]:
        return iter(self.declarations)

    def __len__(self) -> int:
        return len(self.declarations)

    def get(self, op_name: str) -> Declaration | None:
        return self._by_name.get(op_name)

    def op_names(self) -> list[str]:
        return sorted(self._by_name)

    @property
    def description(self) -> str:
        """`path (torch X)` for headers and messages."""
        if self.torch_version is None:
            return self.display_path
        return f"{self.display_path} (torch {self.torch_version})"
