"""Reading the two inputs from disk: the declarations header and the backend YAML.

The installed torch's header is found without importing torch (importing it takes seconds; the
CLI should start in a fraction of one).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import BackendYamlError, DeclarationsError, ScaffoldError, SourceLocation
from ..model.backend import BackendConfig
from ..model.declarations import DeclarationsFile
from ..paths import MAX_INPUT_BYTES, display_path, path_problem, read_bounded
from .backend_yaml import parse_backend_yaml
from .declarations import parse_declarations
from .installed_torch import INSTALLED_HEADER, find_installed_torch, torch_release


def _read_text(path: Path, what: str, shown: str, error: type[ScaffoldError]) -> str:
    try:
        data = read_bounded(path, MAX_INPUT_BYTES)
        if len(data) > MAX_INPUT_BYTES:
            raise error(
                f"{what} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; not a real input",
                location=SourceLocation(shown),
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as problem:
            line = data.count(b"\n", 0, problem.start) + 1
            raise error(
                f"{what} is not UTF-8 text (byte 0x{data[problem.start]:02x})",
                location=SourceLocation(shown, line),
            ) from None
    except FileNotFoundError:
        raise error(f"{what} not found", location=SourceLocation(shown)) from None
    except IsADirectoryError:
        raise error(f"{what} is a directory, not a file", location=SourceLocation(shown)) from None
    except OSError as problem:
        raise error(f"cannot read {what}: {problem.strerror}", location=SourceLocation(shown)) from None


def load_declarations(path: Path | None, root: Path) -> DeclarationsFile:
    """The header at `path`, or the installed torch's own when `path` is None."""
    if path is None:
        torch = find_installed_torch()
        text = _read_text(
            torch.declarations_path,
            "RegistrationDeclarations.h",
            str(torch.declarations_path),
            DeclarationsError,
        )
        return parse_declarations(text, display_path=torch.display_path, torch_version=torch.version)
    shown = display_path(path, root)
    text = _read_text(path, "declarations file", shown, DeclarationsError)
    return parse_declarations(text, display_path=shown)


def read_backend_yaml(path: Path, root: Path) -> str:
    """The backend YAML's text, read with the bound every input has."""
    return _read_text(path, "backend YAML", display_path(path, root), BackendYamlError)


def load_backend_config(path: Path, root: Path) -> BackendConfig:
    return parse_backend_yaml(read_backend_yaml(path, root), display_path=display_path(path, root))


INSTALLED = "installed"
_HEADER_LOCATIONS = (
    INSTALLED_HEADER,
    Path("torch") / INSTALLED_HEADER,
    Path("ATen") / "RegistrationDeclarations.h",
    Path("RegistrationDeclarations.h"),
)


def _torch_version_beside(header: Path) -> str | None:
    """The release of the torch installation that `header` (torch/include/ATen/...) belongs to."""
    return torch_release(header.parent.parent.parent)


def load_declarations_argument(label: str, argument: str, cwd: Path, root: Path) -> DeclarationsFile:
    """A declarations header named on the command line (`label` says which, e.g. OLD): a file,
    a torch installation (or any directory holding the header where torch puts it), or
    `installed` for the current torch."""
    try:
        return _load_declarations_argument(argument, cwd, root)
    except DeclarationsError as error:
        raise DeclarationsError(
            f"{label} is not a readable RegistrationDeclarations.h: {error.message}",
            location=error.location,
            hint="diff compares two RegistrationDeclarations.h files, torch installations, "
            "or `installed` (the current torch)",
        ) from None


def _load_declarations_argument(argument: str, cwd: Path, root: Path) -> DeclarationsFile:
    if argument == INSTALLED:
        return load_declarations(None, root)
    problem = path_problem(argument)
    if problem is not None:
        raise DeclarationsError(f"the path {problem}", location=SourceLocation(argument))
    path = cwd / argument
    if path.is_dir():
        for candidate in _HEADER_LOCATIONS:
            header = path / candidate
            if header.is_file():
                path = header
                break
        else:
            raise DeclarationsError(
                "is a directory without a RegistrationDeclarations.h (looked for "
                + ", ".join(candidate.as_posix() for candidate in _HEADER_LOCATIONS) + ")",
                location=SourceLocation(display_path(cwd / argument, root)),
            )
    declarations = load_declarations(path, root)
    version = _torch_version_beside(path)
    if version is None:
        return declarations
    # Inside a torch installation: named like the installed header, where it lives is irrelevant.
    return dataclasses.replace(
        declarations, torch_version=version, display_path=(Path("torch") / INSTALLED_HEADER).as_posix()
    )
