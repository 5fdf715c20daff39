"""Project settings: `[tool.scaffold-backend]` in the nearest pyproject.toml, so that inside a
backend project a plain `scaffold-backend generate` knows its YAML and directories."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import ProjectConfigError, SourceLocation

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
