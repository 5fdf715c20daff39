"""Kernel stubs: one C++ file per op group (an op with its overloads, inplace and out variants).

A stub is created once and then belongs to the user. A fresh stub compiles and registers, and
fails loudly at run time naming the op, so an unimplemented kernel can never pass for a working
one. Alongside the text, the emitter reports each kernel's definition line and its stand-alone
stub function: merge.py uses them to update a file the user has edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..render import environment, render
from .common import Layout, OutputFile, Owner
from .context import EmitContext

STUB_TEMPLATE = "codegen/kernel_stub.cpp.j2"
STUB_MACROS = "codegen/macros/kernel_stub.j2"


@dataclass(frozen=True)
class StubKernel:
    definition_head: str
    message: str


@dataclass(frozen=True)
class KernelFile:
    output: OutputFile
    heads: Mapping[str, str]
    """op name -> the kernel's definition line, as written in a fresh stub."""
    snippets: Mapping[str, str]
    """op name -> the kernel's stub function alone, for adding it to an existing file."""
    namespace_close: str
    """The line that closes the namespace; new kernels are inserted before it."""


def stub_display_path(context: EmitContext, group: str) -> str:
    """How a stub is named inside generated text: `<kernels dir name>/<group>.cpp`, the same
    wherever the project lives."""
    return f"{context.layout.kernels_dir.name}/{group}.cpp"


def emit_stubs(context: EmitContext) -> list[KernelFile]:
    config = context.config
    stub_macro = environment().get_template(STUB_MACROS).module.kernel_stub  # type: ignore[attr-defined]
    namespace_close = f"}}  // namespace {config.cpp_namespace}"
    files = []
    for group, members in context.kernel_groups().items():
        kernels = {
            op.op_name: StubKernel(
                definition_head=binding.kernel_declaration(context.kernel_scope),
                message=(
                    f"{config.device}: aten::{op.op_name} has no kernel yet "
                    f"(implement {binding.kernel_name} in {stub_display_path(context, group)})"
                ),
            )
            for op, binding in members
        }
        content = render(
            STUB_TEMPLATE,
            group=group,
            device=config.device,
            yaml_path=config.display_path,
            group_header=Layout.group_header(group),
            namespace_open=f"namespace {config.cpp_namespace} {{",
            namespace_close=namespace_close,
            kernels=list(kernels.values()),
        )
        files.append(
            KernelFile(
                output=OutputFile(context.layout.stub_path(group), content, Owner.USER),
                heads={op: kernel.definition_head for op, kernel in kernels.items()},
                snippets={op: str(stub_macro(kernel)) for op, kernel in kernels.items()},
                namespace_close=namespace_close,
            )
        )
    return files
