"""`scaffold-backend init NAME`: a new backend project that builds, imports and passes its own
tests before its author writes a line.

The project has the shape of the reference backend in this repository: its device runtime is
copied verbatim from runtime/ and its small per-project files are rendered from templates/project/
(emit/project.py); its backend YAML is the default one or the user's, adapted (project_yaml.py); NAME is
checked by names.py. The generator then runs on the new project, and the kernels of the core
ops (factories, copies, views) forward to the runtime's implementations.

Everything is staged in a temporary directory beside the target and moved into place at the
end: a bad name, a bad YAML or an unwritable target leaves nothing half-created.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...emit.project import (
    ProjectLayout,
    copied_runtime_files,
    new_project_layout,
    project_files,
    render_package_files,
    setup_command,
)
from ...errors import ProjectConfigError, SourceLocation
from ...model.core_ops import CORE_OPS
from ...model.declarations import DeclarationsFile
from ...model.driver_ops import driver_kernel_ops
from ...model.outputs import GenerateOptions
from ...model.project import DEFAULT_DRIVER, ProjectNames
from ...parse.backend_yaml import parse_backend_yaml
from ...parse.inputs import load_declarations, read_backend_yaml
from ...parse.installed_torch import find_installed_torch
from ...paths import display_path
from ...select.selection import select, unknown_op_hint
from ...write.plan import write_atomically
from ..generate import run
from .core_ops import fill_core_kernels, random_ops
from .examples import filled_example_files
from .names import check_device_name
from .project_yaml import adapt_backend_yaml, default_backend_yaml

__all__ = [
    "InitOptions",
    "InitResult",
    "ProjectLayout",
    "ProjectNames",
    "adapt_backend_yaml",
    "check_device_name",
    "copied_runtime_files",
    "default_backend_yaml",
    "init_project",
    "project_files",
    "render_package_files",
]


@dataclass(frozen=True)
class InitOptions:
    name: str
    target: Path
    ops: tuple[str, ...] = ()
    from_yaml: Path | None = None
    force: bool = False
    dry_run: bool = False
    driver: str = DEFAULT_DRIVER


@dataclass(frozen=True)
class InitResult:
    target: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    """Files that already existed (with --force) and were left exactly as they were."""
    setup_command: str



def _check_ops(ops: Sequence[str], declarations: DeclarationsFile, driver: str) -> list[str]:
    """The --ops entries that are not core ops already, validated against the installed torch,
    then the runtime's random ops and the ops `driver` has device kernels for."""
    extra = []
    for op in ops:
        if declarations.get(op) is None:
            raise ProjectConfigError(
                f"unknown operator '{op}': {declarations.description} has no such operator",
                location=SourceLocation("--ops"),
                hint=unknown_op_hint(op, declarations),
            )
        if op not in CORE_OPS and op not in extra:
            extra.append(op)
    for op in (*random_ops(driver), *driver_kernel_ops(driver)):
        if op not in extra:
            extra.append(op)
    return extra


def _check_target(target: Path, force: bool) -> None:
    location = SourceLocation(str(target))
    if target.exists() and not target.is_dir():
        raise ProjectConfigError("exists and is not a directory", location=location)
    if target.is_dir() and any(target.iterdir()) and not force:
        raise ProjectConfigError(
            "exists and is not empty",
            location=location,
            hint="choose another --dir, or pass --force to add the project's files to it "
            "(existing files are never overwritten or deleted)",
        )
    parent = target if target.is_dir() else target.parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ProjectConfigError(
            f"cannot create files here: {parent} is not writable", location=location
        )


def _stage(names: ProjectNames, backend_yaml: str, driver: str, staging: Path, target: Path) -> None:
    """Write the project into `staging`. Errors name the files where they will end up (`target`);
    the generator's own messages name them relative to the project."""
    for name, content in project_files(names, backend_yaml, find_installed_torch().version, driver).items():
        write_atomically(staging / name, content, shown=str(target / name))
    layout = new_project_layout(names)
    assert layout.yaml_path is not None
    options = GenerateOptions(
        yaml_path=staging / layout.yaml_path,
        out_dir=staging / layout.generated_dir,
        kernels_dir=staging / layout.kernels_dir,
        declarations_path=None,
        root=staging,
    )
    result = run(options)
    # The core ops' kernels forward to the runtime, and those of the ops the driver has device
    # kernels for to the driver's, so the new backend works out of the box.
    bindings = [binding for _, binding in result.context.kernels]
    for kernel in result.kernel_files:
        filled = fill_core_kernels(kernel, bindings, driver)
        if filled != kernel.output.content:
            shown = target / kernel.output.path.relative_to(staging)
            write_atomically(kernel.output.path, filled, shown=str(shown))
    # The examples (the custom op, the custom class and the op that takes it) get working code too.
    fresh = [kernel.output for kernel in result.kernel_files] + list(result.class_scaffolds)
    example = filled_example_files(fresh, options.kernels_dir, result.context.config, names.package)
    for path, content in example.items():
        write_atomically(path, content, shown=str(target / path.relative_to(staging)))


def _relative_files(directory: Path) -> list[str]:
    return sorted(
        path.relative_to(directory).as_posix() for path in directory.rglob("*") if path.is_file()
    )


def init_project(options: InitOptions) -> InitResult:
    names = ProjectNames(options.name)
    check_device_name(options.name, force=options.force)
    target = options.target
    _check_target(target, options.force)
    declarations = load_declarations(None, Path.cwd())
    extra_ops = _check_ops(options.ops, declarations, options.driver)
    if options.from_yaml is not None:
        shown = display_path(options.from_yaml, Path.cwd())
        text = read_backend_yaml(options.from_yaml, Path.cwd())
        # The user's ops are checked against their own file and lines before it is adapted.
        config = parse_backend_yaml(text, display_path=shown)
        select(config, declarations)
        listed = {entry.op_name for entry in config.supported}
        added = [op for op in extra_ops if op not in listed]
        backend_yaml = adapt_backend_yaml(text, shown, names, added, options.driver)
    else:
        backend_yaml = default_backend_yaml(names, extra_ops, options.driver)

    staging_parent = target.parent if not options.dry_run else Path(tempfile.gettempdir())
    try:
        staging_parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{names.device}.init-", dir=staging_parent))
    except OSError as error:
        raise ProjectConfigError(
            f"cannot create the project here: {error.strerror}", location=SourceLocation(str(target))
        ) from None
    setup = setup_command(names, find_installed_torch().version)
    try:
        _stage(names, backend_yaml, options.driver, staging, target)
        files = _relative_files(staging)
        if options.dry_run:
            return InitResult(target, tuple(files), (), setup)
        if not target.exists():
            os.replace(staging, target)
            return InitResult(target, tuple(files), (), setup)
        created, kept = [], []
        for relative in files:
            destination = target / relative
            if destination.exists():
                kept.append(relative)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / relative, destination)
            created.append(relative)
        return InitResult(target, tuple(created), tuple(kept), setup)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def init_report(result: InitResult, cwd: Path, *, dry_run: bool) -> list[str]:
    shown = display_path(result.target, cwd)
    verb = "would create" if dry_run else "created"
    lines = [f"{verb:>12}  {shown}/{relative}" for relative in result.created]
    lines += [f"{'kept':>12}  {shown}/{relative} (exists; left as it is)" for relative in result.kept]
    if not dry_run:
        lines += ["", f"Next: cd {shown} && {result.setup_command}"]
    return lines
