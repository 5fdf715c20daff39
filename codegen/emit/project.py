"""The files of a backend project besides generated/ and its kernels: the device runtime copied
verbatim from runtime/, and the per-project files rendered from templates/project/. Every
project and the reference backend share this one source of truth (the test suite checks foo's
own copies against it).

Which are shared (kept current by `generate`) and which the team's (written once by `init`):
model/project.py. The shared files depend on the project's names and this release of the tool
only, never on the installed torch, so any run of one release renders them alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import __version__
from ..model.driver_ops import DRIVER_KERNELS
from ..model.project import DEFAULT_DRIVER, DRIVER_DIRECTORIES, ProjectNames
from ..parse.torch_support import torch_support
from ..resources import data_dir
from ..runtime_files import copied_from_runtime, project_path
from .render import render

# The OpInfo conformance harness's subpackage: its code is copied (runtime_files.py), its
# expectations file is the project's own.
CONFORMANCE_PACKAGE = "conformance"


@dataclass(frozen=True)
class ProjectLayout:
    """Where a backend package keeps things, relative to its pyproject.toml."""

    generated_dir: str
    kernels_dir: str
    yaml_path: str | None
    """None when another pyproject.toml holds the generator settings (as in this repository, whose
    reference backend's package root is runtime/, with generated/ one level up)."""

    def scaffold_settings(self) -> list[tuple[str, str]]:
        if self.yaml_path is None:
            return []
        return [("yaml", self.yaml_path), ("out", self.generated_dir), ("kernels", self.kernels_dir)]


def new_project_layout(names: ProjectNames) -> ProjectLayout:
    """A project made by `init`: everything beside its pyproject.toml, the YAML named after the device."""
    return ProjectLayout(generated_dir="generated", kernels_dir="kernels", yaml_path=f"yaml/{names.device}.yaml")


# The model libraries of the model harness, in releases that work with the supported torch
# releases, in two extras of every backend package: `models`, the language models (transformers),
# and `vision`, torchvision with timm (which needs it). Each torchvision release is built for one
# torch release (its range comes from torch_support) and follows it by weeks: a new torch may have
# none yet, and asking for one then would take pip to an older torch. The harness skips the models
# of a library that is not installed and says so.
LANGUAGE_MODEL_REQUIREMENTS = ("transformers>=5,<6",)
VISION_MODEL_REQUIREMENTS = ("timm>=1.0.20,<2",)


def _extra(requirements: tuple[str, ...]) -> str:
    return ", ".join(f'"{requirement}"' for requirement in requirements)


def models_extra() -> str:
    """The `models` extra of a backend package, as its pyproject.toml lists it."""
    return _extra(LANGUAGE_MODEL_REQUIREMENTS)


def vision_extra() -> str:
    """The `vision` extra of a backend package, as its pyproject.toml lists it."""
    return _extra((torch_support().torchvision_requirement, *VISION_MODEL_REQUIREMENTS))


# The build backend of every backend package, pinned: its behaviour (build-dir reuse, cmake.define
# from the environment) is part of how projects build.
SCIKIT_BUILD_CORE_REQUIREMENT = "scikit-build-core==1.1.2"
# How a project is built and installed together with what its tests need (the `test` extra of
# its pyproject.toml: pytest, and expecttest for the OpInfo harness): the set-up command and the
# build steps of its workflows.
INSTALL_PROJECT = "pip install --no-build-isolation '.[test]'"


def setup_command(names: ProjectNames, torch_version: str) -> str:
    """What a newcomer runs to install and build the project, then see a tensor on the device:
    the first line of its README, and what `init` prints last."""
    check = f"import torch, {names.package}; print(torch.ones(3).to('{names.device}') + 1)"
    return (
        f"pip install torch=={torch_version} numpy {SCIKIT_BUILD_CORE_REQUIREMENT} ninja"
        f' && {INSTALL_PROJECT} && python -c "{check}"'
    )


def render_package_files(
    names: ProjectNames, layout: ProjectLayout, driver: str = DEFAULT_DRIVER
) -> dict[str, str]:
    """The rendered files of a backend package (pyproject, package __init__, autoload shim), for
    a backend built with `driver` (model/project.py). The reference backend's own copies are
    checked against these by the test suite."""
    context = {
        "driver_dir": DRIVER_DIRECTORIES[driver],
        "device": names.device,
        "package": names.package,
        "autoload_module": names.autoload_module,
        "generated_dir": layout.generated_dir,
        "kernels_dir": layout.kernels_dir,
        "scaffold_settings": layout.scaffold_settings(),
        "torch_requirement": torch_support().requirement,
        "scikit_build_core_requirement": SCIKIT_BUILD_CORE_REQUIREMENT,
        "models_extra": models_extra(),
        "vision_extra": vision_extra(),
    }
    return {
        "pyproject.toml": render("project/pyproject.toml.j2", **context),
        f"python/{names.package}/__init__.py": render("project/package_init.py.j2", **context),
        f"python/{names.autoload_module}.py": render("project/autoload.py.j2", **context),
    }


def copied_runtime_files(names: ProjectNames) -> dict[str, str]:
    """The hand-written runtime, verbatim: C++ sources (PyTorch side and driver), CMakeLists.txt,
    cmake/, the device-agnostic Python side (which files: runtime_files.py, the wheel's list too)."""
    runtime = data_dir("runtime")
    return {
        project_path(path, names.package): (runtime / path).read_text(encoding="utf-8")
        for path in copied_from_runtime(runtime)
    }


def shared_files(names: ProjectNames, driver: str = DEFAULT_DRIVER) -> dict[str, str]:
    """The shared files of a project (model/project.py), by path relative to its root: what
    `init` writes and `generate` keeps current, for a project built with `driver` (its backend
    YAML's `driver:`)."""
    layout = new_project_layout(names)
    context = {
        "device": names.device,
        "package": names.package,
        "torch_requirement": torch_support().requirement,
        "torch_legs": torch_support().ci_legs(),
        "generator_version": __version__,
        "scikit_build_core_requirement": SCIKIT_BUILD_CORE_REQUIREMENT,
        "install_project": INSTALL_PROJECT,
    }
    return {
        **copied_runtime_files(names),
        **render_package_files(names, layout, driver),
        f"tests/test_{names.device}.py": render("project/test_backend.py.j2", **context),
        # The driver port's step-by-step checks, named by PORTING.md.
        "tests/test_driver.py": render("project/test_driver.py.j2", **context),
        f".github/workflows/{names.device}.yml": render("project/ci.yml.j2", **context),
        f".github/workflows/{names.device}-torch-upgrade.yml": render(
            "project/torch_upgrade.yml.j2", **context
        ),
        ".gitignore": render("project/gitignore.j2", **context),
        **_driver_kernel_tests(names, driver),
    }


def _driver_kernel_tests(names: ProjectNames, driver: str) -> dict[str, str]:
    """The tests of the driver's device kernels (model/driver_ops.py), where it has any."""
    kernels = DRIVER_KERNELS.get(driver)
    if kernels is None:
        return {}
    text = render(
        "project/test_driver_kernels.py.j2",
        device=names.device,
        package=names.package,
        driver=driver,
        driver_ops_header=kernels.location,
    )
    return {"tests/test_driver_kernels.py": text}


def team_files(names: ProjectNames, backend_yaml: str, torch_version: str) -> dict[str, str]:
    """The team's files of a new project (model/project.py): written by `init`, never again.
    `torch_version`: the installed torch, which the README's set-up command pins."""
    layout = new_project_layout(names)
    assert layout.yaml_path is not None
    context = {
        "device": names.device,
        "package": names.package,
        "torch_version": torch_version,
        "torch_requirement": torch_support().requirement,
        "generator_version": __version__,
        "setup_command": setup_command(names, torch_version),
    }
    return {
        layout.yaml_path: backend_yaml,
        "README.md": render("project/README.md.j2", **context),
        f"python/{names.package}/{CONFORMANCE_PACKAGE}/expectations.toml": render(
            "project/conformance_expectations.toml.j2", **context
        ),
    }


def project_files(
    names: ProjectNames, backend_yaml: str, torch_version: str, driver: str = DEFAULT_DRIVER
) -> dict[str, str]:
    """Every file of a new project except generated/ and kernels/, which the generator writes."""
    return {**shared_files(names, driver), **team_files(names, backend_yaml, torch_version)}
