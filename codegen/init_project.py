"""`scaffold-backend init NAME`: a new backend project that builds, imports and passes its own
tests before its author writes a line.

The project has the shape of the reference backend in this repository. Its device runtime
(csrc/, driver/, CMakeLists.txt, and the Python side's _device.py, _streams.py and distributed.py) is copied
verbatim from runtime/, and its
small per-project files are rendered from templates/project/, so every project and the reference
backend share one source of truth. The generator then runs on the new project, and the kernels of
the core ops (factories, copies, views) forward to the runtime's implementations.

Everything is staged in a temporary directory beside the target and moved into place at the
end: a bad name, a bad YAML or an unwritable target leaves nothing half-created.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shutil
import sys
import tempfile
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import __version__, ident
from .backend_yaml import parse_backend_yaml
from .core_ops import CORE_OPS, fill_core_kernels
from .errors import ProjectConfigError, ScaffoldError, SourceLocation
from .example_custom_op import EXAMPLE_SCHEMA, filled_example_files
from .generate import run
from .inputs import display_path, load_declarations
from .model import DeclarationsFile
from .options import GenerateOptions
from .render import render
from .resources import data_dir
from .selection import closest_op_names, select
from .torch_support import torch_support
from .writer import write_atomically

# Files copied verbatim from the repository's runtime/ (the reference backend's package root).
RUNTIME_PACKAGE = "torch_foo"
_AUTOLOAD = "TORCH_DEVICE_BACKEND_AUTOLOAD"
_COPIED_FROM_RUNTIME = {"CMakeLists.txt": "CMakeLists.txt"}
_RUNTIME_SOURCE_DIRECTORIES = ("csrc", "driver")
_RUNTIME_SOURCE_SUFFIXES = (".h", ".cpp")
# The device-name-agnostic Python side of the runtime.
_COPIED_PYTHON_MODULES = ("_device.py", "_streams.py", "distributed.py", "_inductor.py")
CONFORMANCE_PACKAGE = "conformance"
# cmake/: how the build finds torch, and the supported torch releases (torch-requirement.txt).
_RUNTIME_BUILD_SUFFIXES = (".cmake", ".py", ".txt")


@dataclass(frozen=True)
class ProjectNames:
    device: str

    @property
    def package(self) -> str:
        return f"torch_{self.device}"

    @property
    def autoload_module(self) -> str:
        return f"_{self.package}_autoload"


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


# The build backend of every backend package, pinned: its behaviour (build-dir reuse, cmake.define
# from the environment) is part of how projects build.
SCIKIT_BUILD_CORE_REQUIREMENT = "scikit-build-core==1.1.2"


def _torch_version() -> str:
    return importlib.metadata.version("torch").split("+", 1)[0]


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
    # The OpInfo conformance harness (python -m <package>.conformance); its expectations file is
    # the project's own (rendered by render_project_files), the code is the same everywhere.
    conformance = runtime / "python" / RUNTIME_PACKAGE / CONFORMANCE_PACKAGE
    for path in sorted(conformance.glob("*.py")):
        files[f"python/{names.package}/{CONFORMANCE_PACKAGE}/{path.name}"] = path.read_text(
            encoding="utf-8"
        )
    return files


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def check_device_name(name: str) -> None:
    """NAME must be a safe identifier, and nothing torch already has: `torch.NAME` (the device
    module), `Tensor.NAME()` / `Tensor.is_NAME` and `Module.NAME()` (the generated methods)."""
    location = SourceLocation("NAME")
    ident.check_device_name(name, location)
    ident.check_device_name_against_torch(name, location)
    clash = _torch_attribute_clash(name)
    if clash is not None:
        raise ProjectConfigError(
            f"device name '{name}' is already used by PyTorch ({clash})",
            location=location,
            hint="pick a name PyTorch does not use, such as 'my_npu'",
        )


def _torch_attribute_clash(name: str) -> str | None:
    torch = _import_torch_without_backends()

    existing = getattr(torch, name, None)
    if existing is not None and not getattr(existing, "_scaffold_device_module", False):
        return f"torch.{name} exists"
    for owner, attribute in (
        (torch.Tensor, name),
        (torch.Tensor, f"is_{name}"),
        (torch.nn.Module, name),
        (torch.UntypedStorage, name),
    ):
        if hasattr(owner, attribute) and not _is_generated_device_method(name):
            return f"{owner.__module__}.{owner.__qualname__}.{attribute} exists"
    return None


def _import_torch_without_backends() -> types.ModuleType:
    """torch, imported without autoloading installed backends (which would add their own names
    to torch); the environment is left as it was. Whatever torch prints while importing (a
    missing NumPy, a CUDA driver notice) is kept from the user, whose terminal shows the tool's
    own messages only; if the import fails, its error is the message."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    previous = os.environ.get(_AUTOLOAD)
    os.environ[_AUTOLOAD] = "0"
    try:
        with warnings.catch_warnings(), _silenced_stderr() as chatter:
            warnings.simplefilter("ignore")
            try:
                import torch
            except Exception as error:  # noqa: BLE001 -- a broken torch fails in any way; say how
                raise ProjectConfigError(
                    f"torch cannot be imported: {type(error).__name__}: {error}",
                    hint=chatter().strip().splitlines()[-1] if chatter().strip() else None,
                ) from None
    finally:
        if previous is None:
            del os.environ[_AUTOLOAD]
        else:
            os.environ[_AUTOLOAD] = previous
    return torch


@contextlib.contextmanager
def _silenced_stderr() -> Iterator[Callable[[], str]]:
    """Redirect file descriptor 2 (C++ and Python writers alike) to a temporary file; yields a
    function returning what was written so far."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)

        def written() -> str:
            sink.flush()
            sink.seek(0)
            return sink.read().decode("utf-8", "replace")

        try:
            yield written
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _is_generated_device_method(name: str) -> bool:
    """True when `name` is the device name of a backend loaded in this process (whose generated
    Tensor methods are then expected, not a clash)."""
    return bool(_import_torch_without_backends()._C._get_privateuse1_backend_name() == name)


def _check_ops(ops: Sequence[str], declarations: DeclarationsFile) -> list[str]:
    """The --ops entries that are not core ops already, validated against the installed torch."""
    extra = []
    for op in ops:
        if declarations.get(op) is None:
            close = closest_op_names(op, declarations.op_names())
            raise ProjectConfigError(
                f"unknown operator '{op}': {declarations.description} has no such operator",
                location=SourceLocation("--ops"),
                hint=f"did you mean {', '.join(repr(c) for c in close)}?" if close else
                "run `scaffold-backend ops --all` to list the operators",
            )
        if op not in CORE_OPS and op not in extra:
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


# ---------------------------------------------------------------------------------------------
# The backend YAML
# ---------------------------------------------------------------------------------------------


def default_backend_yaml(names: ProjectNames, extra_ops: Sequence[str]) -> str:
    return render(
        "project/backend.yaml.j2",
        device=names.device,
        core_ops=CORE_OPS,
        extra_ops=list(extra_ops),
        custom_op_example=EXAMPLE_SCHEMA,
    )


def adapt_backend_yaml(text: str, display: str, names: ProjectNames, extra_ops: Sequence[str]) -> str:
    """A user's backend YAML, with its device and C++ namespace set to the project's name and
    any --ops appended to `supported`. Edits are spliced at the YAML nodes' exact positions, so
    comments and layout survive."""
    parse_backend_yaml(text, display_path=display)  # report the user's own mistakes first
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    assert isinstance(root, yaml.MappingNode)  # parse_backend_yaml accepted it
    entries = {key.value: (key, value) for key, value in root.value}
    edits: list[tuple[int, int, str]] = []
    for key in ("device", "cpp_namespace"):
        if key in entries:
            value = entries[key][1]
            edits.append((value.start_mark.index, value.end_mark.index, names.device))
    if "device" not in entries:
        end = entries["cpp_namespace"][1].end_mark.index
        edits.append((end, end, f"\ndevice: {names.device}"))
    if extra_ops:
        edits.append(_append_supported(text, entries.get("supported"), extra_ops))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _append_supported(
    text: str, entry: tuple[yaml.Node, yaml.Node] | None, ops: Sequence[str]
) -> tuple[int, int, str]:
    """An edit adding `ops` to the `supported` list, in the list's own style."""
    items = "".join(f"\n  - {op}" for op in ops)
    if entry is None:
        end = len(text)
        return (end, end, ("" if text.endswith("\n") else "\n") + f"supported:{items}\n")
    key, value = entry
    if not isinstance(value, yaml.SequenceNode) or not value.value:
        # `supported:` or `supported: []`: replace everything after the key.
        return (key.end_mark.index, value.end_mark.index, f":{items}")
    last = value.value[-1]
    if value.flow_style:
        return (last.end_mark.index, last.end_mark.index, "".join(f", {op}" for op in ops))
    line_start = text.rfind("\n", 0, last.start_mark.index) + 1
    indent = " " * (text.index("-", line_start) - line_start)
    return (last.end_mark.index, last.end_mark.index, "".join(f"\n{indent}- {op}" for op in ops))


# ---------------------------------------------------------------------------------------------
# Creating the project
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InitOptions:
    name: str
    target: Path
    ops: tuple[str, ...] = ()
    from_yaml: Path | None = None
    force: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class InitResult:
    target: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    """Files that already existed (with --force) and were left exactly as they were."""
    setup_command: str


def project_files(names: ProjectNames, backend_yaml: str) -> dict[str, str]:
    """Every file of a new project except generated/ and kernels/, which the generator writes."""
    layout = ProjectLayout("generated", "kernels", f"yaml/{names.device}.yaml")
    torch_version = _torch_version()
    context = {
        "device": names.device,
        "package": names.package,
        "torch_version": torch_version,
        "torch_requirement": torch_support().requirement,
        "torch_legs": torch_support().ci_legs(),
        "generator_version": __version__,
        "scikit_build_core_requirement": SCIKIT_BUILD_CORE_REQUIREMENT,
    }
    files = {
        **copied_runtime_files(names),
        **render_package_files(names, layout),
        f"yaml/{names.device}.yaml": backend_yaml,
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


def _stage(names: ProjectNames, backend_yaml: str, staging: Path) -> None:
    for relative, content in project_files(names, backend_yaml).items():
        write_atomically(staging / relative, content)
    options = GenerateOptions(
        yaml_path=staging / "yaml" / f"{names.device}.yaml",
        out_dir=staging / "generated",
        kernels_dir=staging / "kernels",
        declarations_path=None,
        root=staging,
    )
    result = run(options)
    # The core ops' kernels forward to the runtime, so the new backend works out of the box.
    bindings = [binding for _, binding in result.context.kernels]
    for kernel in result.kernel_files:
        filled = fill_core_kernels(kernel, bindings)
        if filled != kernel.output.content:
            write_atomically(kernel.output.path, filled)
    # The example custom op (yaml custom_ops) gets working kernels too.
    example = filled_example_files(result.kernel_files, names.device, f"yaml/{names.device}.yaml")
    for path, content in example.items():
        write_atomically(path, content)


def _relative_files(directory: Path) -> list[str]:
    return sorted(
        path.relative_to(directory).as_posix() for path in directory.rglob("*") if path.is_file()
    )


def init_project(options: InitOptions) -> InitResult:
    names = ProjectNames(options.name)
    check_device_name(options.name)
    target = options.target
    _check_target(target, options.force)
    declarations = load_declarations(None, Path.cwd())
    extra_ops = _check_ops(options.ops, declarations)
    if options.from_yaml is not None:
        shown = display_path(options.from_yaml, Path.cwd())
        try:
            text = options.from_yaml.read_text(encoding="utf-8")
        except OSError as error:
            raise ProjectConfigError(
                f"cannot read the backend YAML: {error.strerror}", location=SourceLocation(shown)
            ) from None
        # The user's ops are checked against their own file and lines before it is adapted.
        select(parse_backend_yaml(text, display_path=shown), declarations)
        backend_yaml = adapt_backend_yaml(text, shown, names, extra_ops)
    else:
        backend_yaml = default_backend_yaml(names, extra_ops)

    staging_parent = target.parent if not options.dry_run else Path(tempfile.gettempdir())
    try:
        staging_parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{names.device}.init-", dir=staging_parent))
    except OSError as error:
        raise ProjectConfigError(
            f"cannot create the project here: {error.strerror}", location=SourceLocation(str(target))
        ) from None
    try:
        _stage(names, backend_yaml, staging)
        files = _relative_files(staging)
        if options.dry_run:
            return InitResult(target, tuple(files), (), _setup_command(staging))
        setup = _setup_command(staging)
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
    except ScaffoldError as error:
        # An input error found while generating names a staging path; say which input it was.
        raise ProjectConfigError(
            str(error.message), location=_unstaged(error.location, staging), hint=error.hint
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _unstaged(location: SourceLocation | None, staging: Path) -> SourceLocation | None:
    if location is None:
        return None
    return SourceLocation(location.path.replace(str(staging) + os.sep, ""), location.line)


def _setup_command(project: Path) -> str:
    """The README's first command line: what a newcomer runs to install and build."""
    readme = (project / "README.md").read_text(encoding="utf-8").splitlines()
    return next(line for line in readme if line.startswith("pip install"))
