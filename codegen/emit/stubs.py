"""Kernel stubs: one C++ file per op group (an op with its overloads, inplace and out variants).

A stub is created once and then belongs to the user. A fresh stub compiles and registers, and
fails loudly at run time naming the op, so an unimplemented kernel can never pass for a working
one. Alongside the text, the emitter reports each kernel's definition line and its stand-alone
stub function (a KernelFile): write/merge.py uses them to update a file the user has edited.
"""

from __future__ import annotations

from ..model.outputs import OutputFile, Owner, group_header, stub_error
from .context import EmitContext
from .kernel_file import KernelFile, StubFileArguments, StubKernel, render_kernel_file


def emit_stubs(context: EmitContext) -> list[KernelFile]:
    config = context.config
    namespace_close = f"}}  // namespace {config.cpp_namespace}"
    files = []
    for group, members in context.kernel_groups().items():
        kernels = {
            op.op_name: StubKernel(
                definition_head=binding.kernel_declaration(context.kernel_scope),
                message=(
                    f"{stub_error(config.device, op.op_name)} "
                    f"(implement {binding.kernel_name} in {context.layout.stub_display(group)})"
                ),
                type_signature=binding.type_signature(),
            )
            for op, binding in members
        }
        template_arguments = StubFileArguments(
            group=group,
            device=config.device,
            yaml_path=config.display_path,
            group_header=group_header(group),
            namespace_open=f"namespace {config.cpp_namespace} {{",
            namespace_close=namespace_close,
        )
        files.append(
            KernelFile(
                output=OutputFile(
                    context.layout.stub_path(group), render_kernel_file(template_arguments, kernels), Owner.USER
                ),
                kernels=kernels,
                namespace_close=namespace_close,
                template_arguments=template_arguments,
            )
        )
    return files
