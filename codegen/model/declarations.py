"""The generator's model: frozen dataclasses parsed from the two inputs.

`RegistrationDeclarations.h` (shipped in every torch wheel) lists one operator per line:

    at::Tensor & add_out(const at::Tensor & self, ...); // {"schema": "aten::add.out(...) -> ...",
        "dispatch": "True", "default": "False"}     (one line in the file)

A `Declaration` keeps each part of such a line: the C++ declaration text (the reference for the
dispatcher signature), the schema parsed by torchgen's `FunctionSchema`, the two flags, and the
line it came from. `str(declaration)` reproduces the line byte for byte.

The backend YAML becomes a `BackendConfig` (see backend_yaml.py for the parser). Everything
downstream takes these objects, never dicts of strings.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torchgen.model import CustomClassType, FunctionSchema, OperatorName

from ..errors import DeclarationsError, SourceLocation
from .raising_defaults import RAISING_DEFAULT_KERNELS

if TYPE_CHECKING:
    from ..parse.custom_classes import CustomClass

# The separator between the C++ declaration and its JSON metadata on every entry line.
_ENTRY_SEPARATOR = "; // "
_METADATA_KEYS = ("schema", "dispatch", "default")
_FLAG_VALUES = {"True": True, "False": False}
_SCHEMA_NAMESPACE = "aten::"


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

    # The full schema is parsed on first use: a generation needs the schemas of the few hundred
    # ops it emits code for, not of all ~3100 entries (parsing them all costs a quarter second).
    @functools.cached_property
    def _parsed(self) -> tuple[FunctionSchema | None, str | None]:
        schema, error = _parse_schema(self.schema_text)
        if schema is not None and schema.name != self.name:
            return None, f"the schema names '{schema.name}', the entry '{self.name}'"
        if schema is not None:
            # Two arguments of one name would become two C++ parameters of one name.
            names = [argument.name for argument in schema.arguments.flat_all]
            duplicates = sorted({name for name in names if names.count(name) > 1})
            if duplicates:
                return None, f"the argument name '{duplicates[0]}' appears twice"
        return schema, error

    @property
    def parsed(self) -> tuple[FunctionSchema | None, str | None] | None:
        """The schema and error `_parsed` computed, or None while it has not been asked for."""
        parsed: tuple[FunctionSchema | None, str | None] | None = self.__dict__.get("_parsed")
        return parsed

    def adopt_parsed(self, parsed: tuple[FunctionSchema | None, str | None]) -> None:
        """Take `_parsed` from schema_cache.py, which keeps what it computed for this entry's
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
            "schema": _SCHEMA_NAMESPACE + self.schema_text,
            "dispatch": str(self.dispatch),
            "default": str(self.default),
        }
        return f"{self.cpp_declaration}{_ENTRY_SEPARATOR}{json.dumps(metadata)}"


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


def parse_declaration_line(line: str, location: SourceLocation) -> Declaration:
    """Parse one entry line; raise DeclarationsError naming FILE:LINE when it is malformed."""
    cpp_declaration, separator, metadata_text = line.partition(_ENTRY_SEPARATOR)
    if not separator or not cpp_declaration.strip():
        raise DeclarationsError(
            "malformed declaration: expected '<C++ declaration>; // {\"schema\": ..., "
            "\"dispatch\": ..., \"default\": ...}'",
            location=location,
        )
    try:
        metadata = json.loads(metadata_text)
    except json.JSONDecodeError as error:
        raise DeclarationsError(
            f"malformed declaration metadata: {error.msg} "
            f"(column {len(cpp_declaration) + len(_ENTRY_SEPARATOR) + error.colno})",
            location=location,
        ) from None
    if not isinstance(metadata, dict) or tuple(metadata) != _METADATA_KEYS:
        found = list(metadata) if isinstance(metadata, dict) else type(metadata).__name__
        raise DeclarationsError(
            f"malformed declaration metadata: expected the keys {list(_METADATA_KEYS)}, found {found}",
            location=location,
        )
    flags = {}
    for key in ("dispatch", "default"):
        value = metadata[key]
        if not isinstance(value, str) or value not in _FLAG_VALUES:
            raise DeclarationsError(
                f'malformed declaration metadata: "{key}" must be "True" or "False", got {json.dumps(value)}',
                location=location,
            )
        flags[key] = _FLAG_VALUES[value]
    schema_with_namespace = metadata["schema"]
    if not isinstance(schema_with_namespace, str) or not schema_with_namespace.startswith(
        _SCHEMA_NAMESPACE
    ):
        raise DeclarationsError(
            f"malformed declaration metadata: the schema must start with '{_SCHEMA_NAMESPACE}'",
            location=location,
        )
    schema_text = schema_with_namespace[len(_SCHEMA_NAMESPACE) :]
    # Only the operator name is parsed now (see Declaration._parsed). An entry whose full schema
    # the installed torchgen rejects (a Dimname overload in an older torch's header) stays usable
    # for listings and diffs; it is an error only where code must be generated for it.
    name_text, parenthesis, _ = schema_text.partition("(")
    try:
        if not parenthesis or "->" not in schema_text:
            raise ValueError("no argument list or no returns")
        name = OperatorName.parse(name_text)
    except TORCHGEN_PARSE_ERRORS:
        raise DeclarationsError(
            f"malformed schema '{schema_text}': expected 'name.overload(arguments) -> returns'",
            location=location,
        ) from None
    return Declaration(
        cpp_declaration=cpp_declaration,
        schema_text=schema_text,
        name=name,
        dispatch=flags["dispatch"],
        default=flags["default"],
        location=location,
    )


TORCHGEN_PARSE_ERRORS = (AssertionError, AttributeError, IndexError, KeyError, RuntimeError, TypeError, ValueError)
"""What torchgen's parsers raise on text they reject: they assert and index freely rather than
raising one error type, so callers turning rejected text into a located error catch these."""


def _parse_schema(schema_text: str) -> tuple[FunctionSchema | None, str | None]:
    try:
        schema = FunctionSchema.parse(schema_text)
    except TORCHGEN_PARSE_ERRORS as error:
        return None, str(error).splitlines()[0] if str(error) else type(error).__name__
    return schema, None


def _is_skipped_line(stripped: str) -> bool:
    """Blank lines, comments and preprocessor directives carry no entry."""
    return not stripped or stripped.startswith(("//", "#"))


def parse_declarations(
    text: str, *, display_path: str, torch_version: str | None = None
) -> DeclarationsFile:
    declarations: list[Declaration] = []
    by_name: dict[str, Declaration] = {}
    # A byte order mark is an encoding detail, not part of the first entry.
    for line_number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if _is_skipped_line(line.strip()):
            continue
        location = SourceLocation(display_path, line_number)
        declaration = parse_declaration_line(line, location)
        previous = by_name.get(declaration.op_name)
        if previous is not None:
            raise DeclarationsError(
                f"operator '{declaration.op_name}' is declared twice "
                f"(first at line {previous.location.line})",
                location=location,
            )
        by_name[declaration.op_name] = declaration
        declarations.append(declaration)
    if not declarations:
        raise DeclarationsError(
            "no operator declarations found: is this a RegistrationDeclarations.h?",
            location=SourceLocation(display_path),
        )
    return DeclarationsFile(
        display_path=display_path,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        torch_version=torch_version,
        declarations=tuple(declarations),
        _by_name=by_name,
    )


# ---------------------------------------------------------------------------------------------
# The backend YAML
# ---------------------------------------------------------------------------------------------


class FallbackDefault(enum.Enum):
    """What happens to a required op the backend does not implement."""

    CPU = "cpu"
    """Run it on the CPU through the boxed fallback (copies in and out)."""
    ERROR = "error"
    """Raise NotImplementedError naming the op and the backend."""


class FallbackMode(enum.Enum):
    """How the CPU fallback hands device tensors to the CPU kernel."""

    COPY = "copy"
    """Copy every tensor argument to the host and the results back (ATen's cpu_fallback)."""
    HOST_VIEW = "host_view"
    """Run the CPU kernel on host views of device memory, without copies, when the runtime says
    the device memory is host-addressable (else copy)."""


@dataclass(frozen=True)
class OpEntry:
    """An operator named in the backend YAML, with the line that names it."""

    op_name: str
    location: SourceLocation = field(compare=False)


class AutocastPolicy(enum.Enum):
    """How torch.autocast treats an op's floating-point tensor arguments: ATen's CastPolicy
    values, under the names PyTorch's lists (ATen/autocast_mode.h) use."""

    LOWER_PRECISION_FP = "lower_precision_fp"
    """Cast to the autocast dtype (bfloat16, float16) and run there."""
    FP32 = "fp32"
    """Cast to float32 and run there."""
    PROMOTE = "promote"
    """Cast to the widest floating type among the arguments."""


@dataclass(frozen=True)
class AutocastEntry:
    """An op the YAML's `autocast:` section adds to one of the autocast lists."""

    op: OpEntry
    policy: AutocastPolicy


@dataclass(frozen=True)
class FallbackPolicy:
    default: FallbackDefault = FallbackDefault.CPU
    mode: FallbackMode = FallbackMode.COPY
    """Copy, or run on host views of device memory (a runtime that is host-addressable)."""
    warn_once: bool = True
    """Warn the first time each op falls back, so silent slow paths get noticed."""
    never: tuple[OpEntry, ...] = ()
    """Ops that must never run on the CPU: the fallback raises an error naming op and backend."""
    explicit: tuple[OpEntry, ...] = ()
    """Ops that get a typed per-op CPU fallback wrapper (allowed even when default is error)."""


@dataclass(frozen=True)
class CustomOp:
    """One entry of the YAML's `custom_ops`: an operator the backend defines itself, in the
    namespace named after its device (`foo::mymuladd`). The schema is torchgen's, parsed from the
    YAML text, so `str(schema)` is the canonical form TORCH_LIBRARY receives."""

    namespace: str
    schema: FunctionSchema
    autograd: bool
    """Register a Python autograd formula (torch.library.register_autograd) from the user's file."""
    cpu: bool
    """Also register a CPU kernel, so the op runs on host tensors (and opcheck can compare)."""
    location: SourceLocation = field(compare=False)

    @property
    def op_name(self) -> str:
        """`name` or `name.overload`, as torch.library and m.impl() spell it inside the namespace."""
        return str(self.schema.name)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.op_name}"

    @property
    def group(self) -> str:
        """The user's files for the op: its base name, shared by its overloads."""
        return str(self.schema.name.name)

    @property
    def takes_class(self) -> bool:
        """The op takes one of the backend's custom classes (`__torch__.torch.classes.<ns>.<C>`)."""
        return any(isinstance(argument.type, CustomClassType) for argument in self.schema.arguments.flat_all)


@dataclass(frozen=True)
class DeviceGuardType:
    """The runtime's own device guard for the generated wrappers (`device_guard: {type, header}`),
    as torchgen's CUDA wrappers use c10::cuda::OptionalCUDAGuard rather than c10's device-generic
    guard, which reaches the runtime through virtual calls. Constructed from a c10::Device (a
    factory's device) or a std::optional<c10::Device> (the first tensor's, none when undefined);
    a device of another type must leave the current device alone."""

    cpp_type: str
    """Qualified C++ name, e.g. my_backend::DeviceGuard."""
    header: str
    """Its include target, written <...> or "..." as extra_headers are."""


@dataclass(frozen=True)
class BackendConfig:
    """A parsed backend YAML: torchgen's gen_backend_stubs keys plus scaffold-backend's own."""

    location: SourceLocation
    sha256: str
    backend: str
    """The dispatch key kernels register to, e.g. PrivateUse1."""
    autograd_key: str | None
    """Autograd<backend>, when PyTorch has such a key."""
    cpp_namespace: str
    class_name: str | None
    device: str
    """The device name users type in Python (`torch.device("foo")`)."""
    supported: tuple[OpEntry, ...]
    autograd: tuple[OpEntry, ...]
    symint: tuple[OpEntry, ...]
    use_out_as_primary: bool
    device_guard: bool
    extra_headers: tuple[str, ...]
    fallback: FallbackPolicy
    shards: int
    custom_classes: tuple[CustomClass, ...] = ()
    """The `custom_classes:` section (custom_classes.py)."""
    custom_ops: tuple[CustomOp, ...] = ()
    """Operators the backend defines in its own namespace (the `custom_ops` section)."""
    autocast: tuple[AutocastEntry, ...] = ()
    """Ops added to PyTorch's autocast lists for the device (the `autocast:` section), in the
    YAML's order."""
    device_guard_type: DeviceGuardType | None = None
    """The guard the wrappers use when `device_guard` names one; None: c10's."""

    @property
    def device_guard_headers(self) -> tuple[str, ...]:
        """What a file of wrappers includes for the runtime's own guard: its header, if any."""
        return (self.device_guard_type.header,) if self.device_guard_type is not None else ()

    @property
    def display_path(self) -> str:
        return self.location.path
