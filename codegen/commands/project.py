"""Project settings: `[tool.scaffold-backend]` in the nearest pyproject.toml, so that inside a
backend project a plain `scaffold-backend generate` knows its YAML and directories."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProjectConfigError, SourceLocation
from ..model.outputs import DEFAULT_KERNELS_DIR_NAME, GenerateOptions
from ..model.project import ProjectNames
from ..paths import path_problem, real_path
from ..resources import read_private_json, user_cache_dir, write_private_json

SETTINGS_TABLE = "scaffold-backend"
SETTINGS_KEYS = ("yaml", "out", "kernels", "declarations")
_SETTINGS_CACHE_FORMAT = 1


@dataclass(frozen=True)
class ProjectSettings:
    root: Path
    """The directory holding the pyproject.toml; relative settings are resolved from here."""
    yaml: Path | None = None
    out: Path | None = None
    kernels: Path | None = None
    declarations: Path | None = None


def find_project_settings(start: Path) -> ProjectSettings | None:
    """The settings of the nearest pyproject.toml (from `start` upwards) that has them."""
    for directory in (start, *start.parents):
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            settings = _read_settings(pyproject)
            if settings is not None:
                return settings
    return None


def _read_settings(pyproject: Path) -> ProjectSettings | None:
    table = _settings_table(pyproject)
    if table is None:
        return None
    root = pyproject.parent
    return ProjectSettings(root=root, **{key: root / value for key, value in table.items()})


def _settings_table(pyproject: Path) -> dict[str, str] | None:
    """The checked [tool.scaffold-backend] table of `pyproject` (None: it has none).

    Parsed once per content: the table found in these exact bytes is kept in the user's cache
    under their digest, so that the up-to-date answer of `generate` (see entry.py) does not
    import tomllib, which is a tenth of that run. A kept table is checked again as if parsed; a
    missing or damaged one is a miss, and one in a directory others may write is not read.
    Errors are never kept: they are raised from the parse."""
    data = pyproject.read_bytes()
    kept = _settings_cache_path(data)
    location = SourceLocation(str(pyproject))
    document = read_private_json(kept)
    if isinstance(document, dict) and document.get("format") == _SETTINGS_CACHE_FORMAT and "table" in document:
        try:
            return _checked_table(document["table"], location)
        except ProjectConfigError:
            pass  # damaged: parsed again below
    table = _parse_settings_table(data, location)
    write_private_json(kept, {"format": _SETTINGS_CACHE_FORMAT, "table": table})
    return table


def _settings_cache_path(data: bytes) -> Path:
    return user_cache_dir() / "settings" / f"{hashlib.sha256(data).hexdigest()[:32]}.json"


def _parse_settings_table(data: bytes, location: SourceLocation) -> dict[str, str] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProjectConfigError(f"not UTF-8 text: {error}", location=location) from None
    except tomllib.TOMLDecodeError as error:
        raise ProjectConfigError(f"invalid TOML: {error}", location=location) from None
    tool = document.get("tool", {})
    return _checked_table(tool.get(SETTINGS_TABLE) if isinstance(tool, dict) else None, location)


def _checked_table(table: Any, location: SourceLocation) -> dict[str, str] | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ProjectConfigError(f"[tool.{SETTINGS_TABLE}] must be a table", location=location)
    unknown = sorted(set(table) - set(SETTINGS_KEYS))
    if unknown:
        raise ProjectConfigError(
            f"unknown key(s) in [tool.{SETTINGS_TABLE}]: {', '.join(unknown)}",
            location=location,
            hint=f"valid keys: {', '.join(SETTINGS_KEYS)}",
        )
    for key, value in table.items():
        if not isinstance(value, str) or not value:
            raise ProjectConfigError(
                f"[tool.{SETTINGS_TABLE}] {key} must be a path (a non-empty string)",
                location=location,
            )
        problem = path_problem(value)
        if problem is not None:
            raise ProjectConfigError(f"[tool.{SETTINGS_TABLE}] {key} {problem}", location=location)
    return dict(table)


def project_names(root: Path) -> ProjectNames | None:
    """A backend project's names as `init` made them, from its package's name in pyproject.toml
    (`torch_<device>`): its shared files keep them even where the YAML renames the device later
    (the generated code follows the YAML; the package stays what it was). None: not such a name."""
    pyproject = root / "pyproject.toml"
    location = SourceLocation(str(pyproject))
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ProjectConfigError(f"cannot be read: {error}", location=location) from None
    except tomllib.TOMLDecodeError as error:
        raise ProjectConfigError(f"invalid TOML: {error}", location=location) from None
    project = document.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    if not isinstance(name, str) or not name.startswith("torch_") or not name[len("torch_"):].isidentifier():
        return None
    return ProjectNames(name[len("torch_"):])


@dataclass(frozen=True)
class InputPaths:
    """The inputs of a command that reads but does not write (ops, diff)."""

    root: Path
    yaml: Path | None
    declarations: Path | None
    kernels_dir_name: str


def resolve_inputs(cwd: Path, yaml: Path | None, declarations: Path | None) -> InputPaths:
    """Command-line paths (relative to `cwd`) win over the project's settings."""
    settings = find_project_settings(cwd)
    kernels = settings.kernels if settings else None
    return InputPaths(
        root=settings.root if settings else cwd,
        yaml=cwd / yaml if yaml else settings.yaml if settings else None,
        declarations=cwd / declarations if declarations else settings.declarations if settings else None,
        kernels_dir_name=kernels.name if kernels else DEFAULT_KERNELS_DIR_NAME,
    )


def resolve_generate_options(
    cwd: Path,
    yaml: Path | None,
    out: Path | None,
    kernels: Path | None,
    declarations: Path | None,
    force: bool,
) -> GenerateOptions:
    """Command-line paths (relative to `cwd`) win over project settings (relative to the
    pyproject.toml holding them)."""
    settings = find_project_settings(cwd)
    yaml_path = cwd / yaml if yaml else settings.yaml if settings else None
    out_dir = cwd / out if out else settings.out if settings else None
    if yaml_path is None or out_dir is None:
        missing = " and ".join(
            name for name, value in (("--yaml", yaml_path), ("--out", out_dir)) if value is None
        )
        raise ProjectConfigError(
            f"not given, and no pyproject.toml with [tool.{SETTINGS_TABLE}] settings was found in "
            "the working directory or above",
            location=SourceLocation(missing),
            hint="pass --yaml FILE --out DIR, or run inside a project made by `scaffold-backend init`",
        )
    if kernels:
        kernels_dir = cwd / kernels
    elif settings and settings.kernels and out is None:
        kernels_dir = settings.kernels
    else:
        kernels_dir = out_dir.parent / "kernels"
    if declarations:
        declarations_path: Path | None = cwd / declarations
    else:
        declarations_path = settings.declarations if settings else None
    return GenerateOptions(
        yaml_path=yaml_path,
        out_dir=out_dir,
        kernels_dir=kernels_dir,
        declarations_path=declarations_path,
        # Inputs are named relative to the project: the pyproject.toml's directory, else the
        # output directory's parent. Never the working directory, or running the same command
        # from elsewhere would rewrite every file.
        root=settings.root if settings else real_path(out_dir).parent,
        force=force,
    )
