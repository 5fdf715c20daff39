"""The declarations model, on the real headers of three torch releases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scaffold_testing import SHARED_DATA, shared_header, vendored_header

from scaffold_backend.api.op_traits import CROSS_DEVICE_OPS, OpTraits, installed_op_traits, native_functions_yaml
from scaffold_backend.api.signatures import _torchgen_flags, render_dispatcher_declaration, rendering_flags
from scaffold_backend.errors import DeclarationsError, ScaffoldError
from scaffold_backend.parse.declarations import parse_declarations

VERSIONS = ["2.15.0", "2.14.1", "2.13.0", "2.12.0", "2.11.0", "2.9.0"]


def header_path(version: str) -> Path:
    return shared_header(version)


# required: ops without a default kernel, plus the two *_overrideable ops whose default only raises.
@pytest.mark.parametrize(
    ("version", "entries", "required"),
    [("2.15.0", 3110, 863), ("2.14.1", 3103, 860), ("2.13.0", 3101, 860), ("2.12.0", 3216, 860),
     ("2.11.0", 3194, 853), ("2.9.0", 3171, 844)],
)
def test_real_headers_round_trip(version: str, entries: int, required: int) -> None:
    text = header_path(version).read_text()
    declarations = parse_declarations(text, display_path="RegistrationDeclarations.h")
    assert len(declarations) == entries
    assert sum(d.required for d in declarations) == required
    entry_lines = [line for line in text.splitlines() if "; // {" in line]
    assert [str(d) for d in declarations] == entry_lines
    lines = text.splitlines()
    for declaration in declarations:
        assert declaration.location.line is not None
        assert lines[declaration.location.line - 1] == str(declaration)


@pytest.mark.parametrize("version", VERSIONS)
def test_torchgen_reproduces_every_declaration(version: str) -> None:
    """The header's C++ declaration is the reference: rendering the parsed schema with torchgen's
    dispatcher API, under the flags it selects, gives back exactly the header's text."""
    declarations = parse_declarations(header_path(version).read_text(), display_path="h")
    checked = 0
    for declaration in declarations:
        if declaration.schema is None:
            continue
        flags = rendering_flags(declaration)
        assert flags is not None, declaration.op_name
        with _torchgen_flags(flags):
            assert render_dispatcher_declaration(declaration.schema) == declaration.cpp_declaration
        checked += 1
    assert checked > 3000


def test_old_headers_keep_entries_the_installed_torchgen_cannot_parse() -> None:
    """torch 2.13 dropped named tensors; the 2.12 header's Dimname overloads still list by name."""
    declarations = parse_declarations(shared_header("2.12.0").read_text(), display_path="old.h")
    unparsed = [d for d in declarations if d.schema is None]
    assert len(unparsed) == 114
    entry = declarations.get("sum.dim_DimnameList")
    assert entry is not None and entry.schema is None
    assert "Dimname" in (entry.schema_error or "")
    with pytest.raises(DeclarationsError) as error:
        entry.require_schema()
    assert str(error.value).startswith(
        f"old.h:{entry.location.line}: the schema of 'sum.dim_DimnameList' cannot be parsed"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "at::Tensor abs(const at::Tensor & self);",
            "malformed declaration: expected "
            '\'<C++ declaration>; // {"schema": ..., "dispatch": ..., "default": ...}\'',
        ),
        (
            "at::Tensor abs(const at::Tensor & self); "
            '// {"schema": "aten::abs(Tensor self) -> Tensor", "dispatch": "True"',
            "malformed declaration metadata: Expecting ',' delimiter (column 110)",
        ),
        (
            "at::Tensor abs(const at::Tensor & self); "
            '// {"schema": "aten::abs(Tensor self) -> Tensor", "dispatch": "True"}',
            "malformed declaration metadata: expected the keys ['schema', 'dispatch', 'default'], "
            "found ['schema', 'dispatch']",
        ),
        (
            "at::Tensor abs(const at::Tensor & self); "
            '// {"schema": "aten::abs(Tensor self) -> Tensor", "dispatch": "yes", "default": "False"}',
            'malformed declaration metadata: "dispatch" must be "True" or "False", got "yes"',
        ),
        (
            "at::Tensor abs(const at::Tensor & self); "
            '// {"schema": "abs(Tensor self) -> Tensor", "dispatch": "True", "default": "False"}',
            "malformed declaration metadata: the schema must start with 'aten::'",
        ),
        (
            "at::Tensor abs(const at::Tensor & self); "
            '// {"schema": "aten::abs", "dispatch": "True", "default": "False"}',
            "malformed schema 'abs': expected 'name.overload(arguments) -> returns'",
        ),
    ],
)
def test_malformed_entries_name_file_and_line(line: str, message: str) -> None:
    text = "// comment\n#if 1\n\n" + line + "\n"
    with pytest.raises(DeclarationsError) as error:
        parse_declarations(text, display_path="decls.h")
    assert str(error.value) == f"decls.h:4: {message}"


def test_duplicate_and_empty_headers_are_errors() -> None:
    line = (
        "at::Tensor abs(const at::Tensor & self); "
        '// {"schema": "aten::abs(Tensor self) -> Tensor", "dispatch": "True", "default": "True"}'
    )
    with pytest.raises(DeclarationsError) as error:
        parse_declarations(f"{line}\n{line}\n", display_path="d.h")
    assert str(error.value) == "d.h:2: operator 'abs' is declared twice (first at line 1)"
    with pytest.raises(ScaffoldError) as empty:
        parse_declarations("// nothing here\n", display_path="d.h")
    assert str(empty.value) == "d.h: no operator declarations found: is this a RegistrationDeclarations.h?"


def test_op_traits_line_scan_matches_a_full_yaml_parse() -> None:
    """installed_op_traits scans native_functions.yaml by lines (10 ms, where a YAML load takes
    200): it must read what a full parse of the same file reads."""
    with native_functions_yaml().open(encoding="utf-8") as stream:
        entries = yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    parsed = {
        entry["func"].split("(", 1)[0]: OpTraits(
            device_check=entry.get("device_check", "ExactSame") != "NoCheck"
            and entry["func"].split("(", 1)[0] not in CROSS_DEVICE_OPS,
            device_guard=bool(entry.get("device_guard", True)),
        )
        for entry in entries
    }
    scanned = installed_op_traits()
    assert scanned == parsed
    assert not scanned["_copy_from"].device_check  # copies mix devices by design
    assert scanned["mm.out"].device_check


@pytest.mark.parametrize("version", ["2.9.0", "2.12.0"])
def test_vendored_upgrade_data_is_the_real_header(version: str) -> None:
    shared = SHARED_DATA / f"torch-{version}" / "RegistrationDeclarations.h"
    if not shared.is_file():
        pytest.skip(f"the workspace copy {shared} is not beside this checkout")
    assert vendored_header(version).read_bytes() == shared.read_bytes()
