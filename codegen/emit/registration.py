"""Registration files: TORCH_LIBRARY_IMPL blocks binding each kernel to its dispatch key.

Backend kernels are spread over a fixed number of shards by a stable hash of the op name, so no
translation unit is huge and adding an op rewrites a single shard. Autograd kernels (few, by
nature) go to one file for the Autograd<backend> key.
"""

from __future__ import annotations

from ..api.signatures import DECLINED_KERNEL_HEADER, KernelBinding
from ..model.ident import stable_shard
from ..model.outputs import OutputFile, Owner, autograd_registration_name, group_header, registration_shard_name
from ..model.selection import OpStatus, SelectedOp
from .common import generated_banner
from .context import EmitContext
from .render import render

DEVICE_GUARD_INCLUDES = (
    "<ATen/DeviceGuard.h>",
    "<ATen/core/op_registration/adaption.h>",
    "<c10/core/DeviceGuard.h>",
)


def _render(
    context: EmitContext,
    dispatch_key: str,
    kernels: list[tuple[SelectedOp, KernelBinding]],
    shard_note: str,
) -> str:
    config = context.config
    includes = sorted({f'"{group_header(op.group)}"' for op, _ in kernels})
    includes += list(config.extra_headers)
    declining = [binding for _, binding in kernels if binding.declines]
    if declining:
        includes += [DECLINED_KERNEL_HEADER, *sorted({binding.signature.ops_header for binding in declining})]
    if config.device_guard and kernels:
        includes += [*DEVICE_GUARD_INCLUDES, *config.device_guard_headers]
    includes.append("<torch/library.h>")
    return render(
        "codegen/Register.cpp.j2",
        banner=generated_banner(context.selection),
        count=len(kernels),
        dispatch_key=dispatch_key,
        shard_note=shard_note,
        includes=includes,
        bindings=[binding for _, binding in kernels],
    )


def emit_registration_shards(context: EmitContext) -> list[OutputFile]:
    config = context.config
    shards: list[list[tuple[SelectedOp, KernelBinding]]] = [[] for _ in range(config.shards)]
    for op, binding in context.kernels_with_status(OpStatus.NATIVE):
        shards[stable_shard(op.op_name, config.shards)].append((op, binding))
    return [
        OutputFile(
            path=context.layout.in_out(registration_shard_name(config.backend, index)),
            content=_render(
                context,
                config.backend,
                kernels,
                f"shard {index + 1} of {config.shards}, by a stable hash of the op name",
            ),
            owner=Owner.GENERATOR,
        )
        for index, kernels in enumerate(shards)
    ]


def emit_autograd_registration(context: EmitContext) -> list[OutputFile]:
    config = context.config
    if config.autograd_key is None:
        return []
    return [
        OutputFile(
            path=context.layout.in_out(autograd_registration_name(config.autograd_key)),
            content=_render(
                context,
                config.autograd_key,
                context.kernels_with_status(OpStatus.AUTOGRAD),
                "ops listed under 'autograd'",
            ),
            owner=Owner.GENERATOR,
        )
    ]
