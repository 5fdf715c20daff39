"""The device name module: the YAML's `device:` for the Python package, which renames PrivateUse1
to it. Generated like the C++ registrations, so one edit of the YAML renames both sides."""

from __future__ import annotations

from ..model.outputs import DEVICE_NAME_MODULE, OutputFile, Owner
from .common import generated_banner
from .context import EmitContext
from .render import render


def emit_device_name(context: EmitContext) -> list[OutputFile]:
    return [
        OutputFile(
            path=context.layout.in_out(DEVICE_NAME_MODULE),
            content=render(
                "codegen/device_name.py.j2",
                banner=generated_banner(context.selection, comment="#"),
                device=context.config.device,
                yaml_path=context.config.display_path,
            ),
            owner=Owner.GENERATOR,
        )
    ]
