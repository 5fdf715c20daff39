"""Every Python file of the repository is ruff clean (one configuration, in pyproject.toml): the
generator, the runtime's Python package that every project gets, the reference backend's kernels
and generated files, the benchmarks, the tests and CI's scripts; build outputs are not ours to
check. All of them but two kinds are mypy strict too: the generator's expected output in
tests/golden, and the Python modules the build assembles into the package (generated/'s and the
kernels' custom-op and custom-class modules, which import each other as siblings only once
installed). The layering of the generator and of the runtime's components is tests/test_layering.py."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scaffold_testing import REPO

RUFF = [sys.executable, "-m", "ruff", "check", "--no-cache"]


def test_the_repository_is_ruff_clean() -> None:
    process = subprocess.run([*RUFF, "."], cwd=REPO, capture_output=True, text=True, check=False)
    assert process.returncode == 0, process.stdout + process.stderr


def test_ruff_checks_every_python_file_of_the_tree_and_no_build_output() -> None:
    """What ruff checks is what git calls the tree (tracked and new files, not ignored ones), also
    when .gitignore is not read: a copy of the tree without .git, as CI's lowest leg makes, must
    not lint a build directory (runtime/build holds copies of the package) or skip a file."""
    listing = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py", "*.pyi"]
    git = subprocess.run(listing, cwd=REPO, capture_output=True, text=True, check=False)
    if git.returncode != 0:
        pytest.skip(f"not a git checkout: {git.stderr.strip()}")
    show = [*RUFF, "--no-respect-gitignore", "--show-files", "."]
    process = subprocess.run(show, cwd=REPO, capture_output=True, text=True, check=True)
    checked = {Path(line).relative_to(REPO).as_posix() for line in process.stdout.splitlines()}
    assert {path for path in checked if path.endswith((".py", ".pyi"))} == set(git.stdout.splitlines())


MYPY_STRICT_SOURCES = ["codegen", "runtime/python", "runtime/cmake", "benchmarks", "tests", "setup.py", ".ci"]


def test_the_python_sources_are_mypy_strict(tmp_path: Path) -> None:
    """The tests import the generator as `scaffold_backend`, which an editable install (the README's
    set-up) maps to codegen/ through an import hook mypy cannot follow: a link of that name on
    mypy's path has it check the tests' use of the generator against codegen/'s own types."""
    (tmp_path / "scaffold_backend").symlink_to(REPO / "codegen", target_is_directory=True)
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *MYPY_STRICT_SOURCES]
    environment = {**os.environ, "MYPYPATH": str(tmp_path)}
    process = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, check=False)
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
