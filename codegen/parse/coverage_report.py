"""Reading a coverage report: the JSON `python -m torch_<name>.coverage --json` writes (its format:
the runtime's coverage/report.py), checked as the input it is. What `adopt` takes from it ends up
in the backend YAML, in file names and in test code, so every value is checked, with the place of
the first bad one: `report.json: ops[3].shapes[0][1]: ...`.

Fields may be added within a version, so unknown keys are ignored; the known ones must have
their types, op names must be operator names (never a path), dtypes torch's names, and sizes stay
within bounds no real workload reaches (a hostile report gets one error, not a huge test).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from ..errors import CoverageReportError, SourceLocation
from ..model.coverage import (
    REPORT_VERSION,
    ArgumentValue,
    CallSignature,
    CoverageReport,
    CoveredOp,
    OpPath,
)
from ..paths import display_path
from .inputs import _read_text

T = TypeVar("T")

MAX_OPS = 100_000
MAX_SIGNATURES = 64
MAX_TENSORS = 4096
MAX_RANK = 64
MAX_ELEMENTS = 2**31 - 1
"""Per tensor: the generated test allocates it, twice."""
MAX_ARGUMENT_DEPTH = 8
MAX_ARGUMENT_ITEMS = 4096
MAX_STRING = 1024
MAX_INTEGER = 2**63

_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_TORCH_RELEASE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+([a-z0-9.]*)")
_DEVICE = re.compile(r"[a-z_][a-z0-9_]*(:[0-9]+)?")
DTYPES = frozenset(
    {
        "float32", "float64", "float16", "bfloat16", "complex32", "complex64", "complex128",
        "uint8", "int8", "int16", "int32", "int64", "bool", "uint16", "uint32", "uint64",
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
        "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
    }
)
LAYOUTS = frozenset({"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"})
MEMORY_FORMATS = frozenset({"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"})
FLOAT_WORDS = frozenset({"inf", "-inf", "nan"})
CPU_TENSOR_DEVICES = frozenset({"cpu"})


class _Reader:
    """Checks JSON values, naming the place of each (`ops[3].calls`) in its errors."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def fail(self, where: str, message: str, hint: str | None = None) -> NoReturn:
        place = f"{where}: " if where else ""
        raise CoverageReportError(f"{place}{message}", location=SourceLocation(self.shown), hint=hint)

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {_kind(value)}")
        return value

    def field(self, value: dict[str, Any], key: str, where: str) -> Any:
        if key not in value:
            self.fail(where, f"missing field {key!r}")
        return value[key]

    def array(self, value: Any, where: str, limit: int) -> list[Any]:
        if not isinstance(value, list):
            self.fail(where, f"expected an array, got {_kind(value)}")
        if len(value) > limit:
            self.fail(where, f"{len(value)} entries; at most {limit} are allowed")
        return value

    def integer(self, value: Any, where: str, low: int, high: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(where, f"expected an integer, got {_kind(value)}")
        if not low <= value <= high:
            self.fail(where, f"{value} is out of range [{low}, {high}]")
        return value

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            self.fail(where, f"expected a finite number >= 0, got {_kind(value)}")
        return float(value)

    def string(self, value: Any, where: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
        if not isinstance(value, str):
            self.fail(where, f"expected a string, got {_kind(value)}")
        if len(value) > MAX_STRING:
            self.fail(where, f"a string of {len(value)} characters; at most {MAX_STRING} are allowed")
        if pattern is not None and not pattern.fullmatch(value):
            self.fail(where, f"{value!r} is not {what}")
        return value

    def choice(self, value: Any, where: str, choices: frozenset[str], what: str) -> str:
        text = self.string(value, where)
        if text not in choices:
            self.fail(where, f"{text!r} is not {what}", hint=f"known: {', '.join(sorted(choices))}")
        return text

    def items(self, values: list[Any], where: str, item: Callable[[Any, str], T]) -> tuple[T, ...]:
        return tuple(item(value, f"{where}[{index}]") for index, value in enumerate(values))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _load_json(text: str, reader: _Reader) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    except json.JSONDecodeError as error:
        reader.fail("", f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})")
    except RecursionError:
        reader.fail("", "not a report: nested too deeply")
    except ValueError as error:  # duplicate keys, NaN, integers too long to read
        reader.fail("", f"not a valid report: {error}")


def _argument(reader: _Reader, value: Any, where: str, tensors: int, depth: int = 0) -> ArgumentValue:
    if depth > MAX_ARGUMENT_DEPTH:
        reader.fail(where, "nested too deeply")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return reader.integer(value, where, -MAX_INTEGER, MAX_INTEGER)
    if isinstance(value, float):
        if not math.isfinite(value):
            reader.fail(where, "a non-finite number must be written {\"float\": \"inf\"}")
        return value
    if isinstance(value, str):
        return reader.string(value, where)
    if isinstance(value, list):
        items = reader.array(value, where, MAX_ARGUMENT_ITEMS)
        return [_argument(reader, item, f"{where}[{index}]", tensors, depth + 1) for index, item in enumerate(items)]
    typed = reader.mapping(value, where)
    return _typed_argument(reader, typed, where, tensors)


def _typed_argument(reader: _Reader, value: dict[str, Any], where: str, tensors: int) -> ArgumentValue:
    """The one-key (or, for a CPU tensor, two-key) objects of the format."""
    keys = set(value)
    if keys in ({"tensor"}, {"tensor", "device"}):
        if not tensors:
            reader.fail(f"{where}.tensor", "refers to a tensor, but the signature has none")
        index = reader.integer(value["tensor"], f"{where}.tensor", 0, tensors - 1)
        result: dict[str, ArgumentValue] = {"tensor": index}
        if "device" in value:
            result["device"] = reader.choice(
                value["device"], f"{where}.device", CPU_TENSOR_DEVICES, "a device a scalar tensor may be on"
            )
        return result
    if len(keys) != 1:
        reader.fail(where, f"an object with keys {sorted(keys)} is no recorded argument")
    (key,) = keys
    inner = value[key]
    checks: dict[str, Callable[[], ArgumentValue]] = {
        "dtype": lambda: reader.choice(inner, f"{where}.dtype", DTYPES, "a torch dtype"),
        "layout": lambda: reader.choice(inner, f"{where}.layout", LAYOUTS, "a torch layout"),
        "memory_format": lambda: reader.choice(inner, f"{where}.memory_format", MEMORY_FORMATS, "a memory format"),
        "device": lambda: reader.string(inner, f"{where}.device", _DEVICE, "a device"),
        "float": lambda: reader.choice(inner, f"{where}.float", FLOAT_WORDS, "a non-finite float"),
        "complex": lambda: _complex(reader, inner, f"{where}.complex"),
        "generator": lambda: None if inner is None else reader.fail(f"{where}.generator", "must be null"),
        "unsupported": lambda: reader.string(inner, f"{where}.unsupported"),
    }
    if key not in checks:
        reader.fail(
            where, f"{{{key!r}: ...}} is no recorded argument", hint=f"known: {', '.join(sorted(checks))}, tensor"
        )
    return {key: checks[key]()}


def _complex(reader: _Reader, value: Any, where: str) -> ArgumentValue:
    parts = reader.array(value, where, 2)
    if len(parts) != 2:
        reader.fail(where, "expected [real, imaginary]")
    return [_argument(reader, part, f"{where}[{index}]", 0) for index, part in enumerate(parts)]


def _shape(reader: _Reader, value: Any, where: str) -> tuple[int, ...]:
    dims = reader.array(value, where, MAX_RANK)
    shape = tuple(reader.integer(dim, f"{where}[{index}]", 0, MAX_ELEMENTS) for index, dim in enumerate(dims))
    if math.prod(shape) > MAX_ELEMENTS:
        reader.fail(where, f"a tensor of {math.prod(shape)} elements; at most {MAX_ELEMENTS} are allowed")
    return shape


def _signatures(reader: _Reader, op: dict[str, Any], where: str) -> tuple[CallSignature, ...]:
    shapes = reader.array(reader.field(op, "shapes", where), f"{where}.shapes", MAX_SIGNATURES)
    dtypes = reader.array(reader.field(op, "dtypes", where), f"{where}.dtypes", MAX_SIGNATURES)
    arguments = reader.array(op.get("arguments", []), f"{where}.arguments", MAX_SIGNATURES)
    if not len(shapes) == len(dtypes) == len(arguments):
        reader.fail(
            where,
            f"{len(shapes)} shapes, {len(dtypes)} dtypes and {len(arguments)} arguments: one of each per "
            "recorded call signature",
        )
    return tuple(
        _signature(reader, f"{where}.{{}}[{index}]", *recorded)
        for index, recorded in enumerate(zip(shapes, dtypes, arguments, strict=True))
    )


def _signature(reader: _Reader, where: str, shape_list: Any, dtype_list: Any, argument_list: Any) -> CallSignature:
    """One call signature; `where` has a {} for the field (`ops[3].{}[0]`)."""
    shapes_at, dtypes_at, arguments_at = where.format("shapes"), where.format("dtypes"), where.format("arguments")
    shapes = reader.items(
        reader.array(shape_list, shapes_at, MAX_TENSORS), shapes_at, lambda value, place: _shape(reader, value, place)
    )
    dtypes = reader.items(
        reader.array(dtype_list, dtypes_at, MAX_TENSORS), dtypes_at,
        lambda value, place: reader.choice(value, place, DTYPES, "a torch dtype"),
    )
    if len(shapes) != len(dtypes):
        reader.fail(dtypes_at, f"{len(dtypes)} dtypes for {len(shapes)} tensor shapes")
    arguments = reader.items(
        reader.array(argument_list, arguments_at, MAX_ARGUMENT_ITEMS), arguments_at,
        lambda value, place: _argument(reader, value, place, len(shapes)),
    )
    return CallSignature(shapes=shapes, dtypes=dtypes, arguments=arguments)


def _op(reader: _Reader, value: Any, where: str, shown: str) -> CoveredOp:
    op = reader.mapping(value, where)
    name = reader.string(
        reader.field(op, "name", where), f"{where}.name", _OP_NAME, "an operator name such as aten::add.out"
    )
    path_text = reader.choice(
        reader.field(op, "path", where), f"{where}.path", frozenset(path.value for path in OpPath), "a path"
    )
    return CoveredOp(
        name=name,
        path=OpPath(path_text),
        calls=reader.integer(reader.field(op, "calls", where), f"{where}.calls", 1, MAX_INTEGER),
        seconds=reader.number(reader.field(op, "seconds", where), f"{where}.seconds"),
        signatures=_signatures(reader, op, where),
        location=SourceLocation(f"{shown} ({where}, {name})"),
    )


def parse_coverage_report(text: str, shown: str) -> CoverageReport:
    """The report in `text` (`shown`: how messages name its file), fully checked."""
    reader = _Reader(shown)
    document = reader.mapping(_load_json(text, reader), "")
    version = reader.field(document, "version", "")
    if version != REPORT_VERSION:
        reader.fail(
            "version",
            f"a report of format {version!r}; this scaffold-backend reads format {REPORT_VERSION}",
            hint="record it again with the backend built from this project, or use a scaffold-backend "
            "that reads that format",
        )
    ops_value = reader.array(reader.field(document, "ops", ""), "ops", MAX_OPS)
    ops = reader.items(ops_value, "ops", lambda value, place: _op(reader, value, place, shown))
    seen: dict[str, str] = {}
    for index, op in enumerate(ops):
        if op.name in seen:
            reader.fail(f"ops[{index}].name", f"{op.name} appears twice (first at {seen[op.name]})")
        seen[op.name] = f"ops[{index}]"
    command_value = reader.array(document.get("command", []), "command", MAX_ARGUMENT_ITEMS)
    return CoverageReport(
        location=SourceLocation(shown),
        version=REPORT_VERSION,
        torch=reader.string(
            reader.field(document, "torch", ""), "torch", _TORCH_RELEASE, "a torch release such as 2.14.1"
        ),
        device=reader.string(reader.field(document, "device", ""), "device", _DEVICE, "a device name"),
        command=reader.items(command_value, "command", lambda value, place: reader.string(value, place)),
        ops=ops,
    )


def load_coverage_report(path: Path, root: Path) -> CoverageReport:
    shown = display_path(path, root)
    return parse_coverage_report(_read_text(path, "coverage report", shown, CoverageReportError), shown)
