"""What every emitter shares: the output layout, the file record, and the @generated banner."""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path

from ..manifest import GENERATED_MARKER, MANIFEST_NAME
from ..paths import CUSTOM_OPS_DIR
from ..selection import Selection

__all__ = ["CUSTOM_OPS_DIR", "GENERATED_MARKER", "MANIFEST_NAME"]


class Owner(enum.Enum):
    GENERATOR = "generator"
    """Rewritten on every generation; never edit by hand."""
    USER = "user"
    """Created once (kernel stubs), then the user's: later runs merge, never overwrite."""


@dataclass(frozen=True)
class OutputFile:
    path: Path
    content: str
    owner: Owner


@dataclass(frozen=True)
class Layout:
    """Where things go. `root` is the directory input paths are shown relative to."""

    root: Path
    out_dir: Path
    kernels_dir: Path

    def in_out(self, relative: str) -> Path:
        return self.out_dir / relative

    def from_out(self, path: Path) -> str:
        """`path` relative to the output directory (POSIX, may start with ..): how generated
        files refer to each other, identical whatever the output directory is called."""
        return Path(os.path.relpath(path, self.out_dir)).as_posix()

    def stub_path(self, group: str) -> Path:
        return self.kernels_dir / f"{group}.cpp"

    def custom_op_kernel_path(self, group: str) -> Path:
        """The user's C++ kernels (CPU and device) of a custom op and its overloads. A directory
        of their own, so `foo::add` never meets aten::add's kernels/add.cpp."""
        return self.kernels_dir / CUSTOM_OPS_DIR / f"{group}.cpp"

    def custom_op_python_path(self, group: str) -> Path:
        """The user's Python side of a custom op (fake kernel, autograd formula)."""
        return self.kernels_dir / CUSTOM_OPS_DIR / f"{group}.py"

    @staticmethod
    def group_header(group: str) -> str:
        """The per-group declarations header, relative to the output directory."""
        return f"native/{group}.h"


def input_lines(selection: Selection) -> list[str]:
    """The inputs a generated file comes from, named by relative path. The torch version and the
    header's digest are left to the manifest: an upgrade that changes nothing for the backend then
    changes the manifest alone, and a reviewer's diff shows only what matters."""
    return [selection.config.display_path, selection.declarations.display_path]


def generated_banner(selection: Selection, comment: str = "//") -> str:
    """The first lines of every generator-owned file. No timestamps, no absolute paths."""
    inputs = input_lines(selection)
    lines = [f"{comment} {GENERATED_MARKER} from:"]
    lines += [f"{comment}   {line}" for line in inputs]
    lines.append(f"{comment} Do not edit: run `scaffold-backend generate` to update it.")
    return "\n".join(lines)
