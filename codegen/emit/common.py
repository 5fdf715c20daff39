"""What every emitter shares: the @generated banner naming the inputs."""

from __future__ import annotations

from ..model.outputs import GENERATED_MARKER
from ..model.selection import Selection


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
