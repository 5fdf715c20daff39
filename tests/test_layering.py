"""The layout of codegen/ is its pipeline: each package is one step, and a step only uses the steps
before it. Read from the sources' imports (every import: top-level, inside functions and under
TYPE_CHECKING), never from running them. The runtime's C++ components (runtime/csrc/<component>/)
are layered the same way, read from their #include lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scaffold_testing import REPO

CODEGEN = REPO / "codegen"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "errors", "paths", "resources", "runtime_files"),  # what every step uses: the version, errors, paths, data
    ("model",),  # frozen types
    ("parse",),  # inputs into the model
    ("select",),  # what the backend does with each op
    ("api",),  # C++ signatures and types
    ("emit",),  # the model as text, one module per kind of output
    ("write",),  # plan, merge, transaction, the up-to-date answer
    ("commands",),  # generate, init, diff, ops, the command line
)
"""The layers from the bottom up: a module's layer is its top-level package (or, for a module at
the top of codegen/, its own name; "" is codegen/__init__.py). A module imports modules of its
own layer or of layers below, never above."""


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(CODEGEN).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(CODEGEN.rglob("*.py"))}


def _imports() -> Iterator[Import]:
    """Every import of a generator module by another (`from ..model import ident` imports the
    module model.ident; `from ..model.outputs import Layout` imports model.outputs)."""
    for name, path in MODULES.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name.removeprefix("scaffold_backend").lstrip(".") for alias in node.names
                           if alias.name.split(".")[0] == "scaffold_backend"]
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
                targets = [
                    f"{base}.{alias.name}".lstrip(".") if f"{base}.{alias.name}".lstrip(".") in MODULES else base
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                assert target in MODULES, f"{name}:{node.lineno} imports {target!r}, which is no module"
                if target != name:
                    yield Import(name, target, node.lineno)


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for index, members in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"codegen/{top} is in no layer: add it to LAYERS (tests/test_layering.py)")


def test_every_module_belongs_to_a_layer() -> None:
    for module in MODULES:
        _layer(module)


def test_no_module_imports_a_later_step() -> None:
    upwards = [
        f"{edge.importer}:{edge.line} imports {edge.imported}"
        for edge in _imports()
        if _layer(edge.imported) > _layer(edge.importer)
    ]
    assert upwards == []


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each import cycle found by a depth-first walk, as `a -> b -> a`."""
    state: dict[str, str] = {}
    cycles: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycles.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_the_modules_import_each_other_without_cycles() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for edge in _imports():
        graph[edge.importer].add(edge.imported)
    assert _cycles(graph) == []


def test_the_layer_checks_see_what_they_look_for() -> None:
    """A cycle is found, and the import graph has the edges the sources have (within a layer,
    down across layers, and `from ..model import ident` as an import of model.ident)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]
    edges = {(edge.importer, edge.imported) for edge in _imports()}
    assert ("commands.generate", "emit.stubs") in edges
    assert ("parse.custom_classes", "parse.yaml_nodes") in edges
    assert ("parse.backend_yaml", "model.ident") in edges
    assert _layer("commands.cli") > _layer("write.uptodate") > _layer("model.outputs") > _layer("errors")


def test_only_the_orchestrator_uses_the_emitters() -> None:
    """Names and kinds of output live in model/outputs.py; the emitters (the modules of emit/
    that define an `emit_*` function) are for commands/generate.py alone, as torchgen's dest/ is
    for its orchestrator, but for the one output of `adopt` that no generation makes, its tests
    (adopt runs the generation itself through commands/generate.py)."""
    emitters = {
        name
        for name, path in MODULES.items()
        if name.startswith("emit.")
        and any(
            isinstance(node, ast.FunctionDef) and node.name.startswith("emit_")
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    assert "emit.stubs" in emitters and "emit.render" not in emitters
    uses = sorted(
        {(edge.importer, edge.imported) for edge in _imports()
         if edge.imported in emitters and not edge.importer.startswith("emit.")}
    )
    assert {importer for importer, _ in uses} == {"commands.generate", "commands.adopt"}
    assert [imported for importer, imported in uses if importer == "commands.adopt"] == ["emit.adopted_tests"]


# ---------------------------------------------------------------------------------------------
# runtime/csrc: one directory per component
# ---------------------------------------------------------------------------------------------

RUNTIME_CSRC = REPO / "runtime" / "csrc"

RUNTIME_CORE = frozenset({"device", "memory", "streams", "profiler"})
"""What c10/cuda is to CUDA: its parts use each other (the allocator reuses memory per stream, a
launch reports to the profiler, the profiler names streams), so they are one node below."""

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def _component_includes() -> dict[str, set[str]]:
    """Which components each component's files include (by file name: every component is on the
    include path), with the core contracted to one node, "core"."""
    home = {path.name: path.parent.name for path in RUNTIME_CSRC.glob("*/*") if path.is_file()}

    def node(component: str) -> str:
        return "core" if component in RUNTIME_CORE else component

    graph: dict[str, set[str]] = {node(component): set() for component in set(home.values())}
    for path in sorted(RUNTIME_CSRC.glob("*/*")):
        if not path.is_file():
            continue
        for included in _INCLUDE.findall(path.read_text(encoding="utf-8")):
            if included in home and node(home[included]) != node(path.parent.name):
                graph[node(path.parent.name)].add(node(home[included]))
    return graph


def test_the_runtime_is_one_directory_per_component() -> None:
    loose = [path.name for path in RUNTIME_CSRC.iterdir() if path.is_file()]
    assert loose == [], "every runtime source belongs to a component directory of runtime/csrc"
    names = [path.name for path in RUNTIME_CSRC.rglob("*") if path.is_file()]
    assert len(names) == len(set(names)), "files include each other by name: names must be unique"
    assert {path.name for path in RUNTIME_CSRC.iterdir()} >= RUNTIME_CORE


def test_the_runtime_core_includes_nothing_above_it_and_the_rest_has_no_cycle() -> None:
    graph = _component_includes()
    assert graph["core"] == set()
    assert _cycles(graph) == []
    # The edges the sources have: the kernels' machinery over host views, the fallback's use of them.
    assert {"host_view", "core"} <= graph["ops"] and "fallback" in graph["host_view"]
