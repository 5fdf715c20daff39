"""Which of its kernels a user's kernel file defines: the rule of every run, the planner's merge and
the fast up-to-date answer alike.

A kernel is named by the definition line the generator writes for it (its "head"), and is
defined when the user's text has a definition of it:
- in a C++ file, at namespace scope, with the kernel's qualified name and parameter types, decided
  on the file's tokens (cpp_definitions.py), in the namespace the generated text declares its
  kernels in;
- in a Python file (a custom op's fake kernel and autograd formula), as a top-level function of
  the kernel's name, found with Python's own parser. A file that does not parse is left for the
  user (and Python) to report, not patched: it lacks nothing here.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from . import cpp_definitions

BYTE_ORDER_MARK = "\ufeff"
"""A kernel file's UTF-8 byte order mark and CRLF line ends are its form, not its code: the rule
reads the file without them (see `code_of`), and a merge gives them back (write/kernel_text.py)."""


def code_of(text: str) -> str:
    """`text` without a byte order mark and with LF line ends: what a merge reads."""
    return text.removeprefix(BYTE_ORDER_MARK).replace("\r\n", "\n")


def missing_kernels(text: str, suffix: str, generated: str, heads: Mapping[str, str]) -> list[str]:
    """The ops of `heads` (op -> definition head) that `text`, a kernel file with the file suffix
    `suffix`, does not define; `generated` is the text the generator writes for the file."""
    if suffix == ".py":
        return _missing_python_functions(text, heads)
    namespace = declared_namespace(generated)
    signatures = {op: cpp_definitions.kernel_signature(namespace, head) for op, head in heads.items()}
    defined = cpp_definitions.defined_signatures(text, list(signatures.values()))
    return sorted(op for op, signature in signatures.items() if signature not in defined)


def declared_namespace(generated: str) -> str:
    """The C++ namespace (`a::b`) a generated kernel file declares its kernels in: the one it
    opens, the first at file scope."""
    code = cpp_definitions.tokens(generated)
    if "namespace" not in code:
        return ""
    start = code.index("namespace") + 1
    end = code.index("{", start) if "{" in code[start:] else len(code)
    return "::".join(token for token in code[start:end] if token != "::")


def _missing_python_functions(text: str, heads: Mapping[str, str]) -> list[str]:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    defined = {node.name for node in module.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    return sorted(op for op, head in heads.items() if head.removeprefix("def ").partition("(")[0] not in defined)
