"""The reference backend also builds without pip: plain CMake, finding torch through the Python it
is given (never torch's own CMake package, which demands a CUDA toolkit on CUDA wheels)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LOAD = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("torch_foo._C", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(module.device_count(), torch._C._dispatch_has_kernel_for_dispatch_key("aten::add.out", "PrivateUse1"))
"""


@pytest.mark.slow
def test_cmake_build_against_libtorch(tmp_path: Path) -> None:
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(REPO / "runtime"), "-B", str(build), "-G", "Ninja",
         f"-DPython3_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True,
    )
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    assert f"Generated sources: {REPO / 'generated'}" in configure.stdout
    # torch's CUDA is never looked for, whatever the wheel and whatever CUDA pieces lie around.
    assert "CUDA" not in configure.stdout + configure.stderr
    built = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-4000:]
    (library,) = build.glob("_C*.so")
    # A fresh process without autoload: this build's registrations are the only ones.
    environment = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    loaded = subprocess.run([sys.executable, "-c", LOAD, str(library)], capture_output=True, text=True, env=environment)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["2", "True"]
