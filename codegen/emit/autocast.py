"""RegisterAutocast<backend>.cpp: the ops the YAML's `autocast:` section adds to PyTorch's
autocast lists, registered for the Autocast key with ATen's own wrapper (KERNEL_PRIVATEUSEONE),
as PyTorch registers its lists. Nothing without such a section: PyTorch's lists themselves are
the runtime's (csrc/ops/autocast.cpp)."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.outputs import OutputFile, Owner, autocast_registration_name
from .common import generated_banner
from .context import EmitContext
from .render import render


@dataclass(frozen=True)
class AutocastRegistration:
    op_name: str
    macro_arguments: str
    """What KERNEL_PRIVATEUSEONE takes before the policy: `gelu`, or `pow, Tensor_Scalar`."""
    policy: str


def emit_autocast_registration(context: EmitContext) -> list[OutputFile]:
    ops = context.selection.autocast
    if not ops:
        return []
    config = context.config
    registrations = []
    for op in ops:
        name = op.declaration.name
        arguments = [str(name.name)] + ([name.overload_name] if name.overload_name else [])
        registrations.append(AutocastRegistration(op.op_name, ", ".join(arguments), op.policy.value))
    return [
        OutputFile(
            path=context.layout.in_out(autocast_registration_name(config.backend)),
            content=render(
                "codegen/RegisterAutocast.cpp.j2",
                banner=generated_banner(context.selection),
                device=config.device,
                yaml_path=config.display_path,
                autocast_key=f"Autocast{config.backend}",
                registrations=registrations,
            ),
            owner=Owner.GENERATOR,
        )
    ]
