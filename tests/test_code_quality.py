"""The generator's own code: mypy strict and ruff clean (configured in pyproject.toml)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from scaffold_testing import REPO


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "ruff", "check", "--no-cache", "codegen"],
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "codegen"],
    ],
    ids=["ruff", "mypy"],
)
def test_codegen_is_clean(command: list[str]) -> None:
    process = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    assert process.returncode == 0, process.stdout + process.stderr


def test_the_command_line_offers_the_vocabularies_of_their_modules_without_importing_them() -> None:
    """`ops --status` and `diff --format` offer exactly the words the selection and the diff report
    define, and the command line reads them only when they are asked for: starting it imports
    neither torchgen nor the generator proper."""
    from click.testing import CliRunner

    from scaffold_backend.commands.cli import cli
    from scaffold_backend.commands.diff_report import RENDERERS
    from scaffold_backend.model.selection import OpStatus

    assert f"[{'|'.join(sorted(RENDERERS))}]" in CliRunner().invoke(cli, ["diff", "--help"]).output
    statuses = "|".join(status.value for status in OpStatus)
    assert f"[{statuses}]" in CliRunner().invoke(cli, ["ops", "--help"]).output
    probe = "import sys, scaffold_backend.commands.cli; print(sorted({'torchgen', 'jinja2', 'yaml'} & set(sys.modules)))"
    process = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert process.stdout.strip() == "[]"


def _imports(path: Path) -> set[str]:
    """The package-relative modules `path` imports (`from .emit.stubs import x` -> "emit.stubs")."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module is not None:
            modules.add("." * (node.level - 1) + node.module)
    return modules


def test_only_the_orchestrator_uses_the_emitters() -> None:
    """Names and kinds of output live in model/outputs.py; the emitters (the modules of emit/
    that define an `emit_*` function) are for commands/generate.py alone (torchgen's dest/ is
    used by its orchestrator only)."""
    codegen = REPO / "codegen"
    emitters = {
        path.stem
        for path in (codegen / "emit").glob("*.py")
        if any(
            isinstance(node, ast.FunctionDef) and node.name.startswith("emit_")
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    users = sorted(
        path.relative_to(codegen).as_posix()
        for path in codegen.rglob("*.py")
        if path.parent.name != "emit"
        and any(module.rpartition("emit.")[2] in emitters for module in _imports(path) if "emit." in module)
    )
    assert users == ["commands/generate.py"]


def test_errors_are_raised_by_their_own_classes() -> None:
    """Every error a user can get is a subclass of ScaffoldError, never the base class itself."""
    bare = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path in sorted((REPO / "codegen").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and isinstance(node.exc.func, ast.Name)
        and node.exc.func.id == "ScaffoldError"
    ]
    assert bare == []


def test_test_modules_have_unique_names() -> None:
    """tests/ has no __init__.py, so pytest imports each test module by its basename: two files of
    one name (tests/x.py and tests/backend/x.py) stop a whole run at collection."""
    names = [path.name for path in (REPO / "tests").rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []
