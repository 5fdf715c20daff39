"""The Python sources -- the generator's code, the runtime's Python package (which every project
gets) and the benchmarks -- are mypy strict and ruff clean (configured in pyproject.toml); the
generator's layering is tests/test_layering.py."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from scaffold_testing import REPO

PYTHON_SOURCES = ["codegen", "runtime/python", "benchmarks"]


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "ruff", "check", "--no-cache", *PYTHON_SOURCES],
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *PYTHON_SOURCES],
    ],
    ids=["ruff", "mypy"],
)
def test_python_sources_are_clean(command: list[str]) -> None:
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
    heavy = "{'torchgen', 'jinja2', 'yaml'}"
    probe = f"import sys, scaffold_backend.commands.cli; print(sorted({heavy} & sys.modules.keys()))"
    process = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert process.stdout.strip() == "[]"


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
