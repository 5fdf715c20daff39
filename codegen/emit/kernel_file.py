"""A kernel file as the generator writes it: the text of a fresh stub, each kernel's definition
line, and each kernel's stand-alone stub function.

Kernel files belong to the user once created; write/merge.py and write/kernel_text.py use these records to
update a file the user has edited, without importing the emitters.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from ..model.outputs import OutputFile
from .render import environment, render

STUB_TEMPLATE = "codegen/kernel_stub.cpp.j2"
STUB_MACROS = "codegen/macros/kernel_stub.j2"


@dataclass(frozen=True)
class StubKernel:
    definition_head: str
    message: str
    type_signature: str
    """The declaration without parameter names (KernelBinding.type_signature)."""
    body: str | None = None
    """A statement the kernel starts with instead of failing as unimplemented (the core ops'
    kernels of a new project forward to the runtime; a custom op's Python function)."""
    returns: str = ""
    """Python stubs only (custom ops): the return annotation written after the head."""


@dataclass(frozen=True)
class StubFileArguments:
    """What a kernel file's template is rendered with, apart from the kernels."""

    group: str
    device: str
    yaml_path: str
    group_header: str
    namespace_open: str
    namespace_close: str
    extra_includes: tuple[str, ...] = ()
    """Included after the stub's own includes (e.g. the runtime header core-op kernels call)."""


@dataclass(frozen=True)
class KernelFile:
    output: OutputFile
    kernels: Mapping[str, StubKernel]
    """op name -> the kernel as a fresh stub writes it."""
    namespace_close: str
    """The line that closes the namespace; new kernels are inserted before it."""
    template_arguments: StubFileArguments
    template: str = STUB_TEMPLATE
    """The file's template (aten kernel files, custom op kernels, custom op Python)."""
    snippet_macro: tuple[str, str] = (STUB_MACROS, "kernel_stub")
    """The template and macro that render one kernel alone."""

    @functools.cached_property
    def snippets(self) -> Mapping[str, str]:
        """op name -> the kernel's stub function alone, for adding it to an existing file.
        Rendered when first asked for: only a merge into an existing file needs them, and a
        fresh tree of 858 ops would render each kernel twice."""
        return kernel_snippets(self.kernels, self.snippet_macro)

    @property
    def heads(self) -> dict[str, str]:
        """op name -> the kernel's definition line."""
        return {op: kernel.definition_head for op, kernel in self.kernels.items()}

    @property
    def type_signatures(self) -> dict[str, str]:
        return {op: kernel.type_signature for op, kernel in self.kernels.items()}

    def keeping_heads(self, heads: Mapping[str, str]) -> KernelFile:
        """The same file with some definition lines as the user's file has them: used when PyTorch
        renamed parameters only, so the user's names stay (C++ matches a definition to its
        declaration by types, not names). Rendered again from the template, never patched."""
        if not heads:
            return self
        kernels = {
            op: replace(kernel, definition_head=heads.get(op, kernel.definition_head))
            for op, kernel in self.kernels.items()
        }
        return replace(
            self,
            output=replace(
                self.output, content=render_kernel_file(self.template_arguments, kernels, self.template)
            ),
            kernels=kernels,
        )

    def with_bodies(self, bodies: Mapping[str, str], includes: Sequence[str]) -> KernelFile:
        """The same file with some kernels implemented by one statement (op name -> statement),
        and `includes` added after the stub's own includes. Rendered again from the template,
        never patched."""
        if not bodies:
            return self
        kernels = {op: replace(kernel, body=bodies.get(op, kernel.body)) for op, kernel in self.kernels.items()}
        arguments = replace(
            self.template_arguments, extra_includes=(*self.template_arguments.extra_includes, *includes)
        )
        return replace(
            self,
            output=replace(self.output, content=render_kernel_file(arguments, kernels, self.template)),
            kernels=kernels,
            template_arguments=arguments,
        )


def render_kernel_file(
    arguments: StubFileArguments, kernels: Mapping[str, StubKernel], template: str = STUB_TEMPLATE
) -> str:
    return render(template, **asdict(arguments), kernels=list(kernels.values()))


def kernel_snippets(
    kernels: Mapping[str, StubKernel], macro: tuple[str, str] = (STUB_MACROS, "kernel_stub")
) -> dict[str, str]:
    template, name = macro
    stub_macro = getattr(environment().get_template(template).module, name)
    return {op: str(stub_macro(kernel)) for op, kernel in kernels.items()}
