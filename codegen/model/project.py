"""A backend project made by `init`: its names, and which of its files are the team's.

A project's tree holds two kinds of file besides `generated/` (regenerated, never edited) and the
kernel files (the team's code; `generate` keeps their signatures current):
- shared files, the code every project has: the PyTorch-side runtime (`csrc/`), the build glue
  (`CMakeLists.txt`, `cmake/`), the simulated driver and the driver API (`driver/`), the Python
  runtime and harnesses (`python/<package>/`), the project's tests and workflows. The tool keeps
  them current: `generate` brings each to the tool's text, three-way merging a team's edits in
  (model/manifest.py's SharedFileRecord holds the merge base);
- the team's files, written once by `init` and never touched again: the backend YAML, the README,
  the conformance expectations, and whatever the team adds (a driver port in a directory of its
  own, modules, tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProjectNames:
    device: str

    @property
    def package(self) -> str:
        return f"torch_{self.device}"

    @property
    def autoload_module(self) -> str:
        return f"_{self.package}_autoload"


DRIVER_DIRECTORIES = {
    "simulated": "driver",
    "opencl": "driver/opencl",
}
"""The drivers every project has (shared files under driver/), by the name the backend YAML's
`driver:` key and `init --driver` take, and the directory a project builds with
(SCAFFOLD_DRIVER_DIR): the simulated device, and OpenCL through the ICD loader, whose device
kernels (driver/opencl/ops/) a project made with `--driver opencl` forwards its kernels to. A team's
own port lives in a directory of its own, named by SCAFFOLD_DRIVER_DIR."""
DEFAULT_DRIVER = "simulated"
HOST_ADDRESSABLE_DRIVERS = frozenset({"simulated"})
"""The drivers whose device memory the host addresses (unless told otherwise: the simulated
device's SCAFFOLD_DEVICE_MEMORY=discrete), where the runtime's kernels on host views run."""


TORCH_REQUIREMENT_PATH = "cmake/torch-requirement.txt"
"""Every project made by `init`, of any release, has this shared file at its root (the reference
backend, whose project root is runtime/, has it there): how `generate` tells a backend project,
whose shared files it keeps current, from a tree of generated files alone."""


def is_backend_project(root: Path) -> bool:
    return (root / TORCH_REQUIREMENT_PATH).is_file() and (root / "pyproject.toml").is_file()
