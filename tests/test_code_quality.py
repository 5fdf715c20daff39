"""The generator's own code: mypy strict and ruff clean (configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

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
