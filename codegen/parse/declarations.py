"""Reading RegistrationDeclarations.h into the model (model/declarations.py): one Declaration per
entry line, each error located by FILE:LINE."""

from __future__ import annotations

import hashlib
import json

from torchgen.model import FunctionSchema, OperatorName

from ..errors import DeclarationsError, SourceLocation
from ..model.declarations import (
    ENTRY_SEPARATOR,
    SCHEMA_NAMESPACE,
    Declaration,
    DeclarationsFile,
    ParsedSchema,
)

_METADATA_KEYS = ("schema", "dispatch", "default")
_FLAG_VALUES = {"True": True, "False": False}


def parse_declaration_line(line: str, location: SourceLocation) -> Declaration:
    """Parse one entry line; raise DeclarationsError naming FILE:LINE when it is malformed."""
    cpp_declaration, separator, metadata_text = line.partition(ENTRY_SEPARATOR)
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
            f"(column {len(cpp_declaration) + len(ENTRY_SEPARATOR) + error.colno})",
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
        SCHEMA_NAMESPACE
    ):
        raise DeclarationsError(
            f"malformed declaration metadata: the schema must start with '{SCHEMA_NAMESPACE}'",
            location=location,
        )
    schema_text = schema_with_namespace[len(SCHEMA_NAMESPACE) :]
    # Only the operator name is parsed now (see parse_schema). An entry whose full schema
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
        schema_parser=parse_schema,
    )


TORCHGEN_PARSE_ERRORS = (AssertionError, AttributeError, IndexError, KeyError, RuntimeError, TypeError, ValueError)
"""What torchgen's parsers raise on text they reject: they assert and index freely rather than
raising one error type, so callers turning rejected text into a located error catch these."""


def parse_schema(declaration: Declaration) -> ParsedSchema:
    """The entry's full schema, checked against the entry: parsed when first asked for (see
    Declaration.schema_parser)."""
    schema, error = _parse_schema_text(declaration.schema_text)
    if schema is not None and schema.name != declaration.name:
        return None, f"the schema names '{schema.name}', the entry '{declaration.name}'"
    if schema is not None:
        # Two arguments of one name would become two C++ parameters of one name.
        names = [argument.name for argument in schema.arguments.flat_all]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            return None, f"the argument name '{duplicates[0]}' appears twice"
    return schema, error


def _parse_schema_text(schema_text: str) -> ParsedSchema:
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
