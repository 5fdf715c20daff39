"""Project settings: `[tool.scaffold-backend]` in the nearest pyproject.toml, so that inside a
backend project a plain `scaffold-backend generate` knows its YAML and directories."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import ProjectConfigError, SourceLocation
from .options import GenerateOptions
from .outputs import DEFAULT_KERNELS_DIR_NAME

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SETTINGS_TABLE = "scaffold-backend"
SETTINGS_KEYS = ("yaml", "out", "kernels", "declarations")


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
    location = SourceLocation(str(pyproject))
    try:
        document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ProjectConfigError(f"invalid TOML: {error}", location=location) from None
    table = document.get("tool", {}).get(SETTINGS_TABLE)
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
    root = pyproject.parent
    paths: dict[str, Path] = {}
    for key, value in table.items():
        if not isinstance(value, str) or not value:
            raise ProjectConfigError(
                f"[tool.{SETTINGS_TABLE}] {key} must be a path (a non-empty string)",
                location=location,
            )
        paths[key] = root / value
    return ProjectSettings(root=root, **paths)


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
            f"no {missing} given, and no pyproject.toml with [tool.{SETTINGS_TABLE}] settings "
            "was found here or above",
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
        root=settings.root if settings else out_dir.resolve().parent,
        force=force,
    )
