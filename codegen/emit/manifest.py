"""The manifest file (see ..manifest for what it records and why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import __version__
from ..model.manifest import InputRecord, KernelFileRecord, Manifest, SharedFileRecord, sha256_text
from ..model.outputs import MANIFEST_NAME, OutputFile, Owner
from .context import EmitContext
from .kernel_file import KernelFile


def build_manifest(
    context: EmitContext,
    generated: Sequence[OutputFile],
    kernel_files: Sequence[KernelFile],
    orphaned: Sequence[str],
    custom_class_files: Sequence[OutputFile] = (),
    shared_files: Mapping[str, SharedFileRecord] | None = None,
) -> Manifest:
    selection = context.selection
    layout = context.layout
    declarations = selection.declarations
    config = selection.config
    return Manifest(
        generator_version=__version__,
        declarations=InputRecord(
            declarations.display_path, declarations.sha256, declarations.torch_version
        ),
        backend_yaml=InputRecord(config.display_path, config.sha256),
        files={layout.from_out(output.path): sha256_text(output.content) for output in generated},
        kernel_files={
            layout.from_out(kernel.output.path): KernelFileRecord(
                heads=kernel.heads,
                base=kernel.output.content,
                type_signatures=kernel.type_signatures,
            )
            for kernel in kernel_files
        },
        orphaned_kernel_files=tuple(sorted(orphaned)),
        custom_class_files=tuple(sorted(layout.from_out(output.path) for output in custom_class_files)),
        shared_files=dict(shared_files or {}),
    )


def emit_manifest(context: EmitContext, manifest: Manifest) -> OutputFile:
    return OutputFile(
        path=context.layout.in_out(MANIFEST_NAME),
        content=manifest.to_json(),
        owner=Owner.GENERATOR,
    )
