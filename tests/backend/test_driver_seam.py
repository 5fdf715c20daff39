"""The driver seam is real: the runtime builds and works against a second, deliberately minimal
driver (minimal_driver/: one device, plain host memory, every stream synchronous), chosen with
SCAFFOLD_DRIVER_DIR alone, and runtime/csrc makes no operating-system memory calls of its own.

That build is also the test of the plain-CMake path (no pip): torch is found through the Python it
is given, never through torch's own CMake package, which demands a CUDA toolkit on CUDA wheels.
One full build serves both, because a build of foo's runtime is minutes of CI's time."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MINIMAL_DRIVER = Path(__file__).resolve().parent / "minimal_driver"

USE = """
import torch, torch_foo
foo = torch.foo
x = torch.arange(8.0, device="foo")
print("sum", (x * 2).sum().item())
s = foo.Stream()
src = torch.ones(8).pin_memory()
with foo.stream(s):
    x.copy_(src, non_blocking=True)
print("query", s.query(), x.cpu().sum().item())
print("devices", foo.device_count(), foo.get_device_properties().name, foo.memory_protection_enabled())
print("allocated", torch.accelerator.memory_allocated() > 0)
# A driver that cannot time work: the profile has the host side only, and says so (a warning on
# stderr: Kineto starts the device's profiler outside Python's warning handling).
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    (x * 2).sum()
ours = [e for e in prof.events() if e.name == "drvLaunchHostFunc" or "_kernel::" in e.name]
kinds = {str(e.device_type).split(".")[-1] for e in ours}
print("profile", sorted(kinds))
"""


def test_csrc_reaches_the_device_only_through_the_driver() -> None:
    forbidden = re.compile(r"\b(mmap|munmap|mprotect|memfd_create|pthread_create|std::thread)\b")
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "runtime" / "csrc").rglob("*.*"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if forbidden.search(line.split("//")[0])
    ]
    assert offenders == []


@pytest.fixture
def driver_seam_build() -> Iterator[Path]:
    """The build directory: beside the README's build of foo (runtime/build/<wheel tag>), at the same
    depth, so that the source paths a compiler cache hashes (relative to the build directory, as
    CI's ccache does) are the same and the 186 files the two builds share are compiled once."""
    build = REPO / "runtime" / "build" / "driver-seam-test"
    shutil.rmtree(build, ignore_errors=True)
    yield build
    shutil.rmtree(build, ignore_errors=True)


@pytest.mark.slow
def test_runtime_builds_and_runs_against_a_minimal_synchronous_driver(tmp_path: Path, driver_seam_build: Path) -> None:
    build = driver_seam_build
    # The compiler and build type pip's build uses (scikit-build-core takes Python's CXX and builds
    # Release): the same compilations as that build, word for word.
    python_cxx = [word for word in shlex.split(sysconfig.get_config_var("CXX") or "") if not word.startswith("-")]
    environment = {"CXX": shlex.join(python_cxx)} if python_cxx else {}
    configure = subprocess.run(
        ["cmake", "-S", str(REPO / "runtime"), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DSCAFFOLD_DRIVER_DIR={MINIMAL_DRIVER}",
         f"-DSCAFFOLD_GENERATED_DIR={REPO / 'generated'}"],
        capture_output=True, text=True, env={**environment, **os.environ},
    )
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    assert f"Driver sources:    {MINIMAL_DRIVER}" in configure.stdout
    assert f"Generated sources: {REPO / 'generated'}" in configure.stdout
    # torch's CUDA is never looked for, whatever the wheel and whatever CUDA pieces lie around.
    assert "CUDA" not in configure.stdout + configure.stderr
    built = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-4000:]
    # A package of its own: the torch_foo Python sources, then what the build installs into it
    # (this build's _C, and the custom ops' Python side as torch_foo.custom_ops).
    package = tmp_path / "site" / "torch_foo"
    shutil.copytree(REPO / "runtime" / "python" / "torch_foo", package)
    installed = subprocess.run(
        ["cmake", "--install", str(build), "--prefix", str(tmp_path / "site")], capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    assert list(package.glob("_C*.so")) and (package / "custom_ops" / "__init__.py").is_file()
    environment = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", PYTHONPATH=str(tmp_path / "site"))
    used = subprocess.run([sys.executable, "-c", USE], capture_output=True, text=True, env=environment, cwd=tmp_path)
    assert used.returncode == 0, used.stderr[-4000:]
    assert used.stdout.splitlines() == [
        "sum 56.0",
        "query True 8.0",  # synchronous: done on return
        "devices 1 minimal False",
        "allocated True",
        "profile ['CPU']",
    ]
    assert "driver cannot time device work (drvActivityEnable: the minimal driver does not time work)" in used.stderr


def test_simulated_driver_alone(tmp_path: Path) -> None:
    """The simulated driver is plain C++: streams run asynchronously and in order, an event joins
    two streams, device memory is reached through the driver, errors are codes with messages."""
    driver = REPO / "runtime" / "driver"
    program = tmp_path / "driver_program"
    compiled = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", f"-I{driver}", str(Path(__file__).parent / "driver_program.cpp"),
         *map(str, sorted(driver.glob("*.cpp"))), "-o", str(program)],
        capture_output=True, text=True,
    )
    assert compiled.returncode == 0, compiled.stderr[-4000:]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SCAFFOLD_")}
    ran = subprocess.run([str(program)], capture_output=True, text=True, env=environment, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines() == [
        "devices 2",
        "paused: producer drvErrorNotReady, event drvErrorNotReady, consumer drvErrorNotReady, back[3] 0",
        "resumed: back[3] 4",
        "memset: back[3] 0",
        "large: copy 1, overlapping 1, set 1, two streams 1",
        "host pointer differs 1, protected 1",
        "activity: memcpy 7 (16 bytes) kernel 8 memset 7 (16 bytes) kernel 0; in order on producer 1,"
        " kernels >= 1 ms 1, busy covers them 1, dropped 0",
        "pop without push: drvErrorInvalidValue",
        "double free: drvErrorInvalidHandle",
        "bad device: drvErrorInvalidDevice: invalid device index 2: valid indices are 0..1"
        " (device count is set by SCAFFOLD_DEVICE_COUNT)",
    ]
    blocking = subprocess.run(
        [str(program)], capture_output=True, text=True, env=dict(environment, SCAFFOLD_LAUNCH_BLOCKING="1"), timeout=60
    )
    assert blocking.stdout.splitlines()[1] == (
        "FAILED drvTestingPauseStream(producer, 1): drvErrorNotSupported:"
        " streams cannot be paused with SCAFFOLD_LAUNCH_BLOCKING=1"
    )
