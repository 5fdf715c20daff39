"""The declarations headers: every kernel's exact signature.

Without `class_name`, each op group gets its own small header (native/<group>.h) and the umbrella
header includes them all: a kernel file includes only its group's header, so adding an op to the
YAML recompiles one kernel file, not all of them. With `class_name` (torchgen's layout) the
kernels are static members of one struct, which must live in the umbrella header.
"""

from __future__ import annotations

from ..model.outputs import OutputFile, Owner, group_header, umbrella_header_name
from .common import generated_banner
from .context import EmitContext
from .render import render

# The headers ATen's own per-operator native headers include: enough for every type that appears
# in a kernel signature (Tensor, Scalar, Storage, TensorOptions pieces, Generator, lists).
SIGNATURE_TYPE_INCLUDES = (
    "<ATen/core/Reduction.h>",
    "<ATen/core/Tensor.h>",
    "<c10/core/QScheme.h>",
    "<c10/core/Scalar.h>",
    "<c10/core/Storage.h>",
    "<c10/core/TensorOptions.h>",
    "<optional>",
    "<tuple>",
    "<vector>",
)


def emit_declarations(context: EmitContext) -> list[OutputFile]:
    config = context.config
    banner = generated_banner(context.selection)
    groups = context.kernel_groups()
    umbrella = umbrella_header_name(context.config.backend)
    outputs = []
    if config.class_name:
        umbrella_includes = list(SIGNATURE_TYPE_INCLUDES) + list(config.extra_headers)
        class_declarations = [binding.kernel_declaration() for _, binding in context.kernels]
    else:
        umbrella_includes = [f'"{group_header(group)}"' for group in groups]
        umbrella_includes += list(config.extra_headers)
        class_declarations = []
    outputs.append(
        OutputFile(
            path=context.layout.in_out(umbrella),
            content=render(
                "codegen/NativeFunctions.h.j2",
                banner=banner,
                device=config.device,
                includes=umbrella_includes,
                class_name=config.class_name,
                cpp_namespace=config.cpp_namespace,
                declarations=class_declarations,
            ),
            owner=Owner.GENERATOR,
        )
    )
    for group, kernels in groups.items():
        if config.class_name:
            includes = [f'"{umbrella}"']
            declarations = []
        else:
            includes = list(SIGNATURE_TYPE_INCLUDES) + list(config.extra_headers)
            declarations = [binding.kernel_declaration() for _, binding in kernels]
        outputs.append(
            OutputFile(
                path=context.layout.in_out(group_header(group)),
                content=render(
                    "codegen/native_group.h.j2",
                    banner=banner,
                    group=group,
                    stub=context.layout.stub_display(group),
                    includes=includes,
                    cpp_namespace=config.cpp_namespace,
                    declarations=declarations,
                ),
                owner=Owner.GENERATOR,
            )
        )
    return outputs
