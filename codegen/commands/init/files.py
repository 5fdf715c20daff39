"""The files of a backend project: the device runtime copied verbatim from runtime/, and the small
per-project files rendered from templates/project/. Every project and the reference backend share
this one source of truth (the test suite checks foo's own copies against it)."""

from __future__ import annotations

from dataclasses import dataclass

from ... import __version__
from ...emit.render import render
from ...parse.installed_torch import find_installed_torch
from ...parse.torch_support import torch_support
from ...resources import data_dir
from .names import ProjectNames

# Files copied verbatim from the repository's runtime/ (the reference backend's package root).
RUNTIME_PACKAGE = "torch_foo"
_COPIED_FROM_RUNTIME = {"CMakeLists.txt": "CMakeLists.txt"}
_RUNTIME_SOURCE_DIRECTORIES = ("csrc", "driver")
_RUNTIME_SOURCE_SUFFIXES = (".h", ".cpp")
# The device-name-agnostic Python side of the runtime.
_COPIED_PYTHON_MODULES = (
    "_device.py", "_streams.py", "_memory.py", "distributed.py", "_inductor.py", "custom_classes.py"
)
CONFORMANCE_PACKAGE = "conformance"
# Subpackages copied whole (their *.py): the OpInfo conformance harness, the op coverage report.
_COPIED_PYTHON_PACKAGES = (CONFORMANCE_PACKAGE, "coverage")
# cmake/: how the build finds torch, and the supported torch releases (torch-requirement.txt).
_RUNTIME_BUILD_SUFFIXES = (".cmake", ".py", ".txt")


@dataclass(frozen=True)
class ProjectLayout:
    """Where a backend package keeps things, relative to its pyproject.toml."""

    generated_dir: str
    kernels_dir: str
    yaml_path: str | None
    """None when another pyproject.toml holds the generator settings (the reference backend)."""

    def scaffold_settings(self) -> list[tuple[str, str]]:
        if self.yaml_path is None:
            return []
        return [("yaml", self.yaml_path), ("out", self.generated_dir), ("kernels", self.kernels_dir)]


# The reference backend in this repository: its package root is runtime/, generated/ sits one
# level up, and the repository's own pyproject.toml holds the generator settings.
REFERENCE_BACKEND_LAYOUT = ProjectLayout(generated_dir="../generated", kernels_dir="kernels", yaml_path=None)


def new_project_layout(names: ProjectNames) -> ProjectLayout:
    """A project made by `init`: everything beside its pyproject.toml, the YAML named after the device."""
    return ProjectLayout(generated_dir="generated", kernels_dir="kernels", yaml_path=f"yaml/{names.device}.yaml")


# The build backend of every backend package, pinned: its behaviour (build-dir reuse, cmake.define
# from the environment) is part of how projects build.
SCIKIT_BUILD_CORE_REQUIREMENT = "scikit-build-core==1.1.2"


def setup_command(names: ProjectNames, torch_version: str) -> str:
    """What a newcomer runs to install and build the project, then see a tensor on the device:
    the first line of its README, and what `init` prints last."""
    check = f"import torch, {names.package}; print(torch.ones(3).to('{names.device}') + 1)"
    return (
        f"pip install torch=={torch_version} numpy {SCIKIT_BUILD_CORE_REQUIREMENT} ninja pytest"
        f' && pip install --no-build-isolation . && python -c "{check}"'
    )


def render_package_files(names: ProjectNames, layout: ProjectLayout) -> dict[str, str]:
    """The rendered files of a backend package (pyproject, package __init__, autoload shim).
    The reference backend's own copies are checked against these by the test suite."""
    context = {
        "device": names.device,
        "package": names.package,
        "autoload_module": names.autoload_module,
        "generated_dir": layout.generated_dir,
        "kernels_dir": layout.kernels_dir,
        "scaffold_settings": layout.scaffold_settings(),
        "torch_requirement": torch_support().requirement,
        "scikit_build_core_requirement": SCIKIT_BUILD_CORE_REQUIREMENT,
    }
    return {
        "pyproject.toml": render("project/pyproject.toml.j2", **context),
        f"python/{names.package}/__init__.py": render("project/package_init.py.j2", **context),
        f"python/{names.autoload_module}.py": render("project/autoload.py.j2", **context),
    }


def copied_runtime_files(names: ProjectNames) -> dict[str, str]:
    """The hand-written runtime, verbatim: C++ sources (PyTorch side and driver),
    CMakeLists.txt, the Python side."""
    runtime = data_dir("runtime")
    # driver/: the simulated device behind the driver API, the starting point of a port.
    files = {
        f"{directory}/{path.name}": path.read_text(encoding="utf-8")
        for directory in _RUNTIME_SOURCE_DIRECTORIES
        for path in sorted((runtime / directory).iterdir())
        if path.suffix in _RUNTIME_SOURCE_SUFFIXES
    }
    files.update(
        {
            f"cmake/{path.name}": path.read_text(encoding="utf-8")
            for path in sorted((runtime / "cmake").iterdir())
            if path.is_file() and path.suffix in _RUNTIME_BUILD_SUFFIXES
        }
    )
    for source, target in _COPIED_FROM_RUNTIME.items():
        files[target] = (runtime / source).read_text(encoding="utf-8")
    for module in _COPIED_PYTHON_MODULES:
        files[f"python/{names.package}/{module}"] = (
            runtime / "python" / RUNTIME_PACKAGE / module
        ).read_text(encoding="utf-8")
    # python -m <package>.conformance and python -m <package>.coverage; the conformance harness's
    # expectations file is the project's own (rendered by render_project_files), the code is the
    # same everywhere.
    for package in _COPIED_PYTHON_PACKAGES:
        for path in sorted((runtime / "python" / RUNTIME_PACKAGE / package).glob("*.py")):
            files[f"python/{names.package}/{package}/{path.name}"] = path.read_text(encoding="utf-8")
    return files


def project_files(names: ProjectNames, backend_yaml: str) -> dict[str, str]:
    """Every file of a new project except generated/ and kernels/, which the generator writes."""
    layout = new_project_layout(names)
    assert layout.yaml_path is not None
    torch_version = find_installed_torch().version
    context = {
        "device": names.device,
        "package": names.package,
        "torch_version": torch_version,
        "torch_requirement": torch_support().requirement,
        "torch_legs": torch_support().ci_legs(),
        "generator_version": __version__,
        "setup_command": setup_command(names, torch_version),
        "scikit_build_core_requirement": SCIKIT_BUILD_CORE_REQUIREMENT,
    }
    files = {
        **copied_runtime_files(names),
        **render_package_files(names, layout),
        layout.yaml_path: backend_yaml,
        "README.md": render("project/README.md.j2", **context),
        f"tests/test_{names.device}.py": render("project/test_backend.py.j2", **context),
        f"python/{names.package}/{CONFORMANCE_PACKAGE}/expectations.toml": render(
            "project/conformance_expectations.toml.j2", **context
        ),
        f".github/workflows/{names.device}.yml": render("project/ci.yml.j2", **context),
        f".github/workflows/{names.device}-torch-upgrade.yml": render(
            "project/torch_upgrade.yml.j2", **context
        ),
        ".gitignore": render("project/gitignore.j2", **context),
    }
    return files
