"""Fixtures for the generator's tests; importable helpers are in scaffold_testing.py."""

from __future__ import annotations

import os
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from scaffold_testing import CliRun, Toolchain

from scaffold_backend.commands.cli import cli
from scaffold_backend.parse.installed_torch import find_installed_torch


def pytest_configure(config: pytest.Config) -> None:
    # The generator caches "up to date" stamps in the user's cache directory; tests keep theirs
    # apart (subprocesses inherit this).
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="scaffold-backend-test-cache-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite tests/golden from the generator's current output (review the diff!).",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def installed_header() -> Path:
    path: Path = find_installed_torch().declarations_path
    return path


@pytest.fixture
def cli_run(monkeypatch: pytest.MonkeyPatch) -> CliRun:
    """Run the CLI in-process from a chosen working directory."""

    def run(args: Sequence[str], cwd: Path) -> Result:
        monkeypatch.chdir(cwd)
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return run


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    torch = find_installed_torch()
    include = torch.package_dir / "include"
    flags = (f"-I{include}", f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}",
             f"-I{sysconfig.get_paths()['include']}")
    return Toolchain(include_flags=flags, library_dir=torch.package_dir / "lib")
