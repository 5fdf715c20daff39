"""Helpers shared by the generator's tests (fixtures live in conftest.py). A module of its own,
not conftest.py: tests/backend has a conftest.py too, and `from conftest import` would be
ambiguous."""

from __future__ import annotations

import gzip
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest
from click.testing import Result

REPO = Path(__file__).resolve().parent.parent
# Real headers from the torch 2.9.0 and 2.12.0 wheels, for upgrade tests (see shared/data/README.md).
SHARED_DATA = Path(os.environ.get("SCAFFOLD_SHARED_DATA", REPO.parent / "shared" / "data"))
TESTS = Path(__file__).resolve().parent
# The release of the torch the tests run against: messages about the installed header name it.
INSTALLED_TORCH = importlib.metadata.version("torch").split("+", 1)[0]
GOLDEN = TESTS / "golden"


class CliRun(Protocol):
    """The `cli_run` fixture: run the CLI in-process with `args`, from the working directory `cwd`."""

    def __call__(self, args: Sequence[str], cwd: Path) -> Result: ...


def shared_header(version: str) -> Path:
    """The real RegistrationDeclarations.h of torch `version`: the workspace's shared copy when it
    is beside this checkout, else the gzipped copy vendored in tests/data/upstream."""
    shared = SHARED_DATA / f"torch-{version}" / "RegistrationDeclarations.h"
    if shared.is_file():
        return shared
    return vendored_header(version)


def vendored_header(version: str) -> Path:
    packed = TESTS / "data" / "upstream" / f"torch-{version}-RegistrationDeclarations.h.gz"
    if not packed.is_file():
        pytest.fail(f"no real header for torch {version}: neither {SHARED_DATA} nor {packed}")
    unpacked = Path(tempfile.gettempdir()) / f"scaffold-backend-tests-torch-{version}" / "RegistrationDeclarations.h"
    if not unpacked.is_file():
        unpacked.parent.mkdir(parents=True, exist_ok=True)
        temporary = unpacked.with_suffix(f".{os.getpid()}")
        temporary.write_bytes(gzip.decompress(packed.read_bytes()))
        os.replace(temporary, unpacked)
    return unpacked


def fake_torch_installation(directory: Path, version: str) -> Path:
    """A directory laid out like an installed torch package holding the real header of torch
    `version`: what `diff` accepts as a torch installation, whatever torch is installed."""
    package = directory / f"torch-{version}" / "torch"
    header = package / "include" / "ATen" / "RegistrationDeclarations.h"
    if not header.is_file():
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_bytes(shared_header(version).read_bytes())
        (package / "version.py").write_text(f"__version__ = '{version}'\n")
    return package


def run_cli_process(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real executable, for exit codes and 'no traceback' checks."""
    return subprocess.run(
        [sys.executable, "-m", "scaffold_backend.commands.entry", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def tree(directory: Path) -> dict[str, bytes]:
    """Every file below `directory` by relative path, with its bytes."""
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def compiler_launcher() -> list[str]:
    """The launcher CMake would put before the compiler (CMAKE_CXX_COMPILER_LAUNCHER, ccache in CI):
    the tests' own compilations are cached as the builds' are."""
    return os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER", "").split()


@dataclass(frozen=True)
class Toolchain:
    """g++ and the flags to compile against the installed torch (no build system needed)."""

    include_flags: tuple[str, ...]
    library_dir: Path

    def compile(self, source: Path, output: Path, include_dirs: Sequence[Path] = ()) -> subprocess.Popen[str]:
        command = [
            *compiler_launcher(), "g++", "-std=c++20", "-fPIC", "-O0", "-w", "-c", str(source),
            "-o", str(output),
            *self.include_flags, *(f"-I{directory}" for directory in include_dirs),
        ]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def link(self, objects: Sequence[Path], output: Path) -> None:
        subprocess.run(
            ["g++", "-shared", "-o", str(output), *map(str, objects), f"-L{self.library_dir}",
             "-ltorch", "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{self.library_dir}"],
            check=True,
        )


def compile_all(
    toolchain: Toolchain, sources: Sequence[Path], objects_dir: Path, include_dirs: Sequence[Path], jobs: int = 2
) -> list[Path]:
    """Compile `sources` with `jobs` g++ processes at a time; fail with the compiler's output."""
    objects_dir.mkdir(parents=True, exist_ok=True)
    pending = list(sources)
    running: list[tuple[Path, subprocess.Popen[str]]] = []
    objects = []
    while pending or running:
        while pending and len(running) < jobs:
            source = pending.pop(0)
            target = objects_dir / (source.name + ".o")
            objects.append(target)
            running.append((source, toolchain.compile(source, target, include_dirs)))
        source, process = running.pop(0)
        output, _ = process.communicate()
        assert process.returncode == 0, f"g++ failed on {source}:\n{output[-6000:]}"
    return objects


RUNTIME_CSRC = REPO / "runtime" / "csrc"
# One directory per component, each on the include path (as runtime/CMakeLists.txt puts them).
RUNTIME_COMPONENTS = sorted(path for path in RUNTIME_CSRC.iterdir() if path.is_dir())


def build_generated_tree(toolchain: Toolchain, root: Path, library: str) -> Path:
    """Build `root`'s generated/ and kernels/ into the shared object `root/library`: generated
    sources one TU each, every user-owned source (kernels/, custom ops' and custom classes'
    subdirectories) as one unity TU (hundreds of tiny stub TUs would dominate a test's time
    without checking anything more), and the runtime's cpu_fallback.cpp with its observer hook, dtype retry
    and traffic counter, the fallback file's machinery, and the reason a kernel declined (its
    warning), which need nothing else of the runtime when the fallback copies (the default)."""
    unity = root / "all_kernels.cpp"
    unity.write_text("".join(f'#include "{path}"\n' for path in sorted((root / "kernels").rglob("*.cpp"))))
    sources = sorted((root / "generated").glob("*.cpp")) + [
        unity,
        RUNTIME_CSRC / "fallback" / "cpu_fallback.cpp",
        RUNTIME_CSRC / "fallback" / "dtype_fallback.cpp",
        RUNTIME_CSRC / "fallback" / "fallback_observer.cpp",
        RUNTIME_CSRC / "device" / "host_traffic.cpp",
        RUNTIME_CSRC / "device" / "kernel_declined.cpp",
    ]
    objects = compile_all(toolchain, sources, root / "obj", [root / "generated", *RUNTIME_COMPONENTS])
    output = root / library
    toolchain.link(objects, output)
    return output


def python_without_autoload(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run Python code in a fresh process where no PrivateUse1 backend is autoloaded, so a test
    library can claim the key."""
    environment = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=environment, capture_output=True, text=True
    )
