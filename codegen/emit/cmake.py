"""sources.cmake: the list of files a build compiles, so the build never has to guess.

Kernel files whose ops no longer exist are left out (they would not compile against the new
declarations) and named in a comment until the user deletes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.outputs import DEVICE_NAME_MODULE, SOURCES_CMAKE, OutputFile, Owner
from ..paths import CUSTOM_OPS_DIR
from .common import generated_banner
from .context import EmitContext
from .render import render


def emit_sources_cmake(
    context: EmitContext,
    generated: Sequence[OutputFile],
    kernel_files: Sequence[OutputFile],
    orphaned: Sequence[str],
) -> OutputFile:
    layout = context.layout
    generated_sources = sorted(
        layout.from_out(output.path) for output in generated if output.path.suffix == ".cpp"
    )
    kernel_sources = sorted(
        layout.from_out(output.path) for output in kernel_files if output.path.suffix == ".cpp"
    )
    # The custom ops' Python files, generated and the user's: installed together as
    # <package>.custom_ops.
    python_sources = sorted(
        layout.from_out(output.path)
        for output in (*generated, *kernel_files)
        if output.path.suffix == ".py" and output.path.parent.name == CUSTOM_OPS_DIR
    )
    excluded = [
        f"Excluded: {path} (its ops are no longer generated; delete it once its code is moved)"
        for path in sorted(orphaned)
    ]
    return OutputFile(
        path=layout.in_out(SOURCES_CMAKE),
        content=render(
            "codegen/sources.cmake.j2",
            banner=generated_banner(context.selection, comment="#"),
            device=context.config.device,
            generated_sources=generated_sources,
            kernel_sources=kernel_sources,
            python_sources=python_sources,
            device_name_module=DEVICE_NAME_MODULE,
            excluded=excluded,
        ),
        owner=Owner.GENERATOR,
    )
