"""The test `adopt` writes for each op it adds: the op on the device against the CPU, on exactly
the call signatures the coverage report recorded, which the test holds as data (it must run in CI
long after the report is gone). The comparison itself is the backend package's
coverage/adopted.py, shipped with every project."""

from __future__ import annotations

import pprint
import sys
from collections.abc import Sequence
from typing import Any

from ..model.coverage import CallSignature, CoverageReport, CoveredOp
from ..model.outputs import Layout, OutputFile, Owner, adopted_test_name
from ..paths import display_path
from .render import render


def _literal(value: Any) -> str:
    """`value` as Python source on one line (pprint: deterministic, and valid Python for the
    JSON-like values of a report)."""
    return pprint.pformat(value, width=sys.maxsize, sort_dicts=False, compact=True)


def _items_literal(values: Sequence[Any], brackets: str = "[]") -> str:
    """A list (or, with "()", a tuple) of `values`, one per line, for a reviewer's diff."""
    return brackets[0] + "\n" + "".join(f"    {_literal(value)},\n" for value in values) + brackets[1]


def _signature_data(signature: CallSignature) -> dict[str, Any]:
    return {
        "shapes": [list(shape) for shape in signature.shapes],
        "dtypes": list(signature.dtypes),
        "arguments": list(signature.arguments),
    }


def _signature_id(index: int, signature: CallSignature) -> str:
    if not signature.shapes:
        return str(index)
    first = "x".join(str(size) for size in signature.shapes[0]) or "scalar"
    return f"{index}-{signature.dtypes[0]}-{first}"


def emit_adopted_test(
    op: CoveredOp,
    group: str,
    stub_errors: Sequence[str],
    report: CoverageReport,
    report_shown: str,
    package: str,
    layout: Layout,
) -> OutputFile:
    """The test of `op` (a row of `report`, shown as `report_shown`), whose kernels live in
    kernels/<group>.cpp and whose group's stubs raise `stub_errors`. Created once, then the
    user's (Owner.SCAFFOLD)."""
    content = render(
        "codegen/adopted_test.py.j2",
        qualified_name=op.name,
        device=report.device,
        report_literal=_literal(report_shown),
        command_literal=_literal(list(report.command)),
        package=package,
        kernel_file=display_path(layout.stub_path(group), layout.root),
        op_literal=_literal(op.name),
        stub_errors_literal=_items_literal(stub_errors, "()"),
        signatures_literal=_items_literal([_signature_data(signature) for signature in op.signatures]),
        ids_literal=_literal([_signature_id(index, signature) for index, signature in enumerate(op.signatures)]),
        test_name=op.op_name.replace(".", "_"),
    )
    return OutputFile(layout.adopted_tests_dir / adopted_test_name(op.op_name), content, Owner.SCAFFOLD)
