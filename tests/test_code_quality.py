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


def test_the_command_line_offers_exactly_the_report_formats_there_are() -> None:
    from scaffold_backend.diff_report import RENDERERS
    from scaffold_backend.report_formats import REPORT_FORMATS

    assert REPORT_FORMATS == tuple(sorted(RENDERERS))
