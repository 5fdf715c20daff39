"""Which files of runtime/ every backend project gets, and so what the scaffold-backend wheel ships.

`init` copies these files verbatim into each new project (emit/project.py), and setup.py makes the
same list the wheel's package data for `scaffold_backend.runtime`, so an installed generator has
every file `init` reads and nothing else of the reference backend. A new runtime source, CMake
script or Python module is picked up by both without a second edit.

Standard library only: setup.py loads this file by path, before the package is built.
"""

from __future__ import annotations

from pathlib import Path

# The reference backend's Python package; every project gets its device-agnostic modules under
# its own package name.
RUNTIME_PACKAGE = "torch_foo"
RUNTIME_PACKAGE_DIR = f"python/{RUNTIME_PACKAGE}"

# Directories copied by suffix, with their subdirectories: the PyTorch side of the runtime (one
# subdirectory per component), the driver API with the simulated device behind it (a port's
# starting point) and the OpenCL driver (driver/opencl, its driver.cmake linking OpenCL), and how
# the build finds torch (with the supported releases, torch-requirement.txt).
_COPIED_DIRECTORIES = {
    "csrc": (".h", ".cpp"),
    "driver": (".h", ".cpp", ".cmake"),
    "cmake": (".cmake", ".py", ".txt"),
}
# PORTING.md: the porting guide, at the root of every project (its driver header points there).
_COPIED_FILES = ("CMakeLists.txt", "PORTING.md")
# Every module and subpackage of the Python package is copied, except the package's __init__
# (rendered per project from templates/project/package_init.py.j2) and the reference backend's
# own demo. Data files in the package (conformance/expectations.toml) are rendered per project.
_PYTHON_SUFFIX = ".py"
REFERENCE_BACKEND_ONLY = ("__init__.py", "demo.py")


def copied_from_runtime(runtime: Path) -> list[str]:
    """The files of `runtime` (the repository's runtime/, or its copy inside an installed
    scaffold-backend) that projects get, as sorted POSIX paths relative to it."""
    paths = [name for name in _COPIED_FILES if (runtime / name).is_file()]
    for directory, suffixes in _COPIED_DIRECTORIES.items():
        paths += [
            path.relative_to(runtime).as_posix()
            for path in (runtime / directory).rglob("*")
            if path.is_file() and path.suffix in suffixes
        ]
    package = runtime / RUNTIME_PACKAGE_DIR
    for path in package.rglob(f"*{_PYTHON_SUFFIX}"):
        relative = path.relative_to(package).as_posix()
        if path.is_file() and relative not in REFERENCE_BACKEND_ONLY:
            paths.append(f"{RUNTIME_PACKAGE_DIR}/{relative}")
    return sorted(paths)


def project_path(runtime_path: str, package: str) -> str:
    """Where the runtime file `runtime_path` (from copied_from_runtime) goes in a project whose
    Python package is `package`."""
    prefix = f"{RUNTIME_PACKAGE_DIR}/"
    if runtime_path.startswith(prefix):
        return f"python/{package}/{runtime_path.removeprefix(prefix)}"
    return runtime_path


def template_files(templates: Path) -> list[str]:
    """Every Jinja template under `templates` (the generator's and init's), as sorted POSIX paths
    relative to it: the wheel ships them all."""
    return sorted(path.relative_to(templates).as_posix() for path in templates.rglob("*.j2") if path.is_file())
