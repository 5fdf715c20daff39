"""What `generate` is asked to do, resolved to paths. Kept apart from generate.py so that the
command line and the fast "up to date" answer need not import the generator itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GenerateOptions:
    yaml_path: Path
    out_dir: Path
    kernels_dir: Path
    declarations_path: Path | None
    """None: the installed torch's RegistrationDeclarations.h."""
    root: Path
    """Input paths are shown relative to this directory in generated files and messages."""
    force: bool = False
