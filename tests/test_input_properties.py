"""Property tests of the three parsers of untrusted text: whatever the declarations
header, the backend YAML or the manifest holds, parsing gives a result or a ScaffoldError (which
the CLI reports as one line), never another exception."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scaffold_testing import TESTS

from scaffold_backend.errors import ScaffoldError
from scaffold_backend.model.manifest import Manifest
from scaffold_backend.parse.backend_yaml import parse_backend_yaml
from scaffold_backend.parse.declarations import parse_declarations
from scaffold_backend.parse.manifest import parse_manifest

SUBSET_HEADER_LINES = (TESTS / "data" / "declarations_2.13_subset.h").read_text().splitlines()
SMALL_YAML_LINES = (TESTS / "data" / "small_backend.yaml").read_text().splitlines()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def result_or_scaffold_error(parse: Any, text: str) -> None:
    try:
        parse(text)
    except ScaffoldError as error:
        assert str(error).strip(), "an error must say something"


def mutated_lines(lines: list[str]) -> st.SearchStrategy[str]:
    """Real lines, some replaced by arbitrary text or cut short: near-valid input, where parsers
    are most likely to trip."""
    line = st.one_of(
        st.sampled_from(lines),
        st.text(max_size=80),
        st.sampled_from(lines).flatmap(lambda real: st.integers(0, len(real)).map(lambda cut: real[:cut])),
        st.sampled_from(lines).flatmap(
            lambda real: st.text(max_size=8).map(lambda noise: real.replace('"', noise, 1))
        ),
    )
    return st.lists(line, max_size=12).map("\n".join)


@SETTINGS
@given(st.one_of(st.text(max_size=400), mutated_lines(SUBSET_HEADER_LINES)))
def test_declarations_parser_gives_a_result_or_a_scaffold_error(text: str) -> None:
    def parse(source: str) -> None:
        for declaration in parse_declarations(source, display_path="d.h").declarations:
            # The schema is parsed lazily; reading it must not raise either.
            assert declaration.schema is not None or declaration.schema_error

    result_or_scaffold_error(parse, text)


@SETTINGS
@given(st.one_of(st.text(max_size=400), mutated_lines(SMALL_YAML_LINES)))
def test_backend_yaml_loader_gives_a_result_or_a_scaffold_error(text: str) -> None:
    result_or_scaffold_error(lambda source: parse_backend_yaml(source, display_path="b.yaml"), text)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
VALID_MANIFEST = json.loads(
    '{"format": 1, "generator": {"name": "scaffold-backend", "version": "0.1.0"},'
    ' "inputs": {"declarations": {"path": "d.h", "sha256": "' + "a" * 64 + '"},'
    ' "backend_yaml": {"path": "b.yaml", "sha256": "' + "b" * 64 + '"}},'
    ' "files": {"native/abs.h": "' + "c" * 64 + '"},'
    ' "kernel_files": {"../kernels/abs.cpp": {"heads": {"abs": "at::Tensor abs(...) {"}, "base": "x"}},'
    ' "orphaned_kernel_files": []}'
)


def with_one_field_replaced(value: Any) -> st.SearchStrategy[dict[str, Any]]:
    """The valid manifest with one field, at any depth, replaced by an arbitrary JSON value."""
    paths: list[tuple[str, ...]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*path, key))

    walk(VALID_MANIFEST, ())

    def replace(path: tuple[str, ...], new: Any) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(json.dumps(VALID_MANIFEST))
        if not path:
            return new if isinstance(new, dict) else {"format": new}
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = new
        return document

    return st.tuples(st.sampled_from(paths), value).map(lambda pair: replace(*pair))


def test_the_valid_manifest_of_these_properties_parses() -> None:
    assert isinstance(parse_manifest(json.dumps(VALID_MANIFEST), "m.json"), Manifest)


@SETTINGS
@given(st.one_of(
    st.text(max_size=300),
    with_one_field_replaced(JSON_VALUES).map(json.dumps),
    JSON_VALUES.map(json.dumps),
))
def test_manifest_loader_gives_a_result_or_a_scaffold_error(text: str) -> None:
    result_or_scaffold_error(lambda source: parse_manifest(source, "m.json"), text)


@SETTINGS
@given(st.lists(st.sampled_from(["..", ".", "/", "a", "\\", "C:", "\x00", "b.h"]), max_size=8).map("".join))
def test_manifest_paths_are_plain_relative_paths(path: str) -> None:
    document = json.loads(json.dumps(VALID_MANIFEST))
    document["files"] = {path: "c" * 64}
    try:
        manifest = parse_manifest(json.dumps(document), "m.json")
    except ScaffoldError:
        return
    segments = path.split("/")
    assert path and not path.startswith("/") and "\\" not in path and "\x00" not in path and ":" not in path[1:2]
    body = segments[next(i for i, s in enumerate(segments) if s != ".."):]
    assert all(segment not in ("", ".", "..") for segment in body)
    assert list(manifest.files) == [path]
