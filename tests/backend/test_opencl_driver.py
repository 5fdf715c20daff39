"""The OpenCL driver (runtime/driver/opencl) on its own: a C++ program, no torch, checks it against
the contract of scaffold_driver.h on whatever OpenCL device the machine has (PoCL's CPU device in
CI). Every value it compares is computed on the host. Skipped where there is no OpenCL to build
against (headers, libOpenCL) or no platform with a device to run on."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "runtime" / "driver"
PROGRAM = Path(__file__).resolve().parent / "opencl_driver_program.cpp"
# What a compiler or linker says when OpenCL's headers or its ICD loader are not installed.
NO_OPENCL = ("CL/cl.h", "-lOpenCL")


def build(tmp_path: Path) -> Path:
    program = tmp_path / "opencl_driver_program"
    compiled = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", f"-I{DRIVER}", str(PROGRAM),
         *map(str, sorted((DRIVER / "opencl").glob("*.cpp"))), "-lOpenCL", "-o", str(program)],
        capture_output=True, text=True,
    )
    if compiled.returncode != 0 and any(missing in compiled.stderr for missing in NO_OPENCL):
        pytest.skip(f"no OpenCL to build against (install ocl-icd-opencl-dev): {compiled.stderr.strip()[-300:]}")
    assert compiled.returncode == 0, compiled.stderr[-4000:]
    return program


def execute(program: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SCAFFOLD_")}
    return subprocess.run([str(program)], capture_output=True, text=True, env={**environment, **variables}, timeout=120)


def run(program: Path, **variables: str) -> list[str]:
    ran = execute(program, **variables)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    if lines == ["no OpenCL devices"]:
        pytest.skip("no OpenCL platform with a GPU, CPU or accelerator device (install an ICD, e.g. pocl-opencl-icd)")
    return lines


@pytest.mark.slow
def test_opencl_driver_alone(tmp_path: Path) -> None:
    """Devices, memory named by addresses that fault on host access and resolve to (buffer, offset)
    anywhere inside an allocation, copies with offsets (overlapping ones as memmove), memsets and
    fills of every pattern size, host functions in stream order, two streams joined by an event,
    event timing, native handles, and what the driver refuses; in launch-blocking mode too."""
    program = build(tmp_path)
    assert run(program) == [
        "devices 1, named 1, memory 1, units 1, capability >= 1.2 1, host-addressable 0, protected 1",
        "launch blocking 0",
        "pointers: device 0, same buffer inside 1 at offset 4100, own buffers 1, past the end drvErrorInvalidValue,"
        " host pointer drvErrorNotSupported",
        "host access faults 1",
        "copies: host-to-device 1, device-to-device 1, device-to-host 1",
        "overlapping copies 1",
        "memset and fills 1, misaligned fill drvErrorInvalidValue",
        # The stream is asynchronous: a host function that sleeps keeps it busy.
        "host function: ordered 1, query while it sleeps drvErrorNotReady, after sync drvSuccess",
        "event: pending drvErrorNotReady, consumer pending drvErrorNotReady, joined 1, then drvSuccess,"
        " never recorded drvSuccess",
        "elapsed >= 0 1, untimed drvErrorInvalidHandle, unrecorded drvErrorInvalidHandle,"
        " stream after its last event drvSuccess",
        "host functions run before destroy returns 100",
        "native handles: queue 1, context 1, device 1, memory 1",
        "capture: drvErrorNotSupported",
        "not device memory: drvErrorInvalidValue: named",
        "past the allocation: drvErrorInvalidValue",
        "double free: drvErrorInvalidHandle",
        "bad device: drvErrorInvalidDevice",
    ]
    # SCAFFOLD_LAUNCH_BLOCKING=1: every enqueue has finished when it returns.
    blocking = run(program, SCAFFOLD_LAUNCH_BLOCKING="1")
    assert blocking[1] == "launch blocking 1"
    assert blocking[7] == "host function: ordered 1, query while it sleeps drvSuccess, after sync drvSuccess"
    assert blocking[8].startswith("event: pending drvSuccess, consumer pending drvSuccess, joined 1")

    # A platform index that does not exist is a configuration error, not a guess.
    ran = execute(program, SCAFFOLD_OPENCL_PLATFORM="99")
    assert ran.returncode == 1
    assert ran.stdout.startswith(
        "FAILED drvGetDeviceCount(&count): drvErrorConfiguration: SCAFFOLD_OPENCL_PLATFORM='99' is not a platform index"
    )
