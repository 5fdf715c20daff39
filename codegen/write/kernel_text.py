"""A user's kernel file as text, in the form the user keeps it.

- Bytes that are not UTF-8 (a Latin-1 comment) are carried through untouched (surrogateescape):
  a file that needs no change never blocks a run, and one that does keeps those bytes.
- A UTF-8 byte order mark and CRLF line endings are taken off before merging and put back after,
  so a merge changes only what it must.
- Every kernel the YAML asks of a file is in it afterwards: one missing from the file (no
  definition of it, e.g. a file that was orphaned and now gets its ops back, or a kernel the user
  deleted) is appended as a fresh stub, so the gap shows up as a change (and `--check` fails)
  instead of as a link error. Whether a kernel is defined is decided on the file's C++ tokens
  (parse/kernel_definitions.py): a comment or a string that holds its signature does not count,
  and a signature the user reformatted does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..emit.kernel_file import KernelFile
from ..errors import OutputError, SourceLocation
from ..model.manifest import KernelFileRecord
from ..parse import kernel_definitions
from ..parse.kernel_definitions import BYTE_ORDER_MARK
from ..paths import MAX_INPUT_BYTES, display_path, read_bounded
from .merge import MergeOutcome, MergeResult


def read_kernel_file(path: Path, root: Path, what: str = "kernel file") -> str | None:
    """A file of the user's (a kernel file, or `what`) as text; None when it is not there."""
    try:
        data = read_bounded(path, MAX_INPUT_BYTES)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(
            f"cannot read the {what}: {error.strerror or error}",
            location=SourceLocation(display_path(path, root)),
        ) from None
    if len(data) > MAX_INPUT_BYTES:
        raise OutputError(
            f"the {what} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; not a {what}",
            location=SourceLocation(display_path(path, root)),
        )
    return data.decode("utf-8", errors="surrogateescape")


def update_preserving_form(
    current: str,
    record: KernelFileRecord | None,
    kernel: KernelFile,
    update: Callable[[str, KernelFileRecord | None, KernelFile], MergeResult],
    shown: str,
) -> MergeResult:
    """`update(current, record, kernel)` on the file without its BOM and CRLFs, which the result
    then gets back; then every kernel missing from the result is added."""
    bom = current.startswith(BYTE_ORDER_MARK)
    crlf = "\r\n" in current
    body = kernel_definitions.code_of(current)
    result = update(body, record, kernel)
    if result.outcome is not MergeOutcome.CONFLICT:
        completed = add_missing_kernels(result.content, kernel)
        if completed is None:
            raise OutputError(
                "the kernel file lacks the kernel(s) "
                + ", ".join(missing_kernels(result.content, kernel))
                + f" and has no single `{kernel.namespace_close}` line to add them before",
                location=SourceLocation(shown),
                hint="add the missing kernels by hand (`scaffold-backend ops` names them), "
                "or restore the closing namespace line",
            )
        if completed is not None and completed != result.content:
            outcome = MergeOutcome.REGENERATED if result.outcome is MergeOutcome.REGENERATED else MergeOutcome.MERGED
            result = replace(result, outcome=outcome, content=completed)
    content = result.content
    if crlf:
        content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    if bom:
        content = BYTE_ORDER_MARK + content
    if content == current and result.outcome is not MergeOutcome.CONFLICT:
        return replace(result, content=current)
    return replace(result, content=content)


def missing_kernels(text: str, kernel: KernelFile) -> list[str]:
    """Ops of `kernel` that `text` does not define (see parse/kernel_definitions.py for the rule)."""
    return kernel_definitions.missing_kernels(text, kernel.output.path.suffix, kernel.output.content, kernel.heads)


def add_missing_kernels(text: str, kernel: KernelFile) -> str | None:
    """`text` with a stub appended (before the closing namespace line) for every missing kernel;
    None when some are missing and there is no single closing line to put them before."""
    missing = missing_kernels(text, kernel)
    if not missing:
        return text
    lines = text.splitlines(keepends=True)
    closing = [index for index, line in enumerate(lines) if line.rstrip("\n") == kernel.namespace_close]
    if len(closing) != 1:
        return None
    # Each new kernel after a blank line, before the namespace closes: the layout of a fresh file.
    insertion = "".join("\n" + kernel.snippets[op] for op in missing)
    lines.insert(closing[0], insertion.lstrip("\n") + "\n")
    return "".join(lines)
