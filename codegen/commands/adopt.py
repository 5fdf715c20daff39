"""`adopt`: the ops a coverage report ranks first become the kernels to write next.

`scaffold-backend adopt REPORT.json (--top N | --op NAME ...)`, in a project:

1. reads the report (parse/coverage_report.py), which must be about this backend's device and
   the installed torch;
2. picks the ops: the N that spent the most time in the CPU fallback and are not in the YAML yet,
   or the named ones (which must be fallback rows of the report);
3. takes each op with its group: the functional, in-place and out= variants of one signature
   (torchgen's rule) that would fall back too;
4. adds them to the YAML's `supported` list (or `autograd`, where the group already is), editing
   the text so every comment, key and line of the file stays (write/yaml_edit.py);
5. plans the same generation `generate` makes from the edited YAML (new kernel stubs appear;
   kernel files are merged, never overwritten), and one test per op in tests/adopted/ on exactly
   the call signatures the report recorded (emit/adopted_tests.py);
6. writes the YAML, the generated files and the tests as one transaction (write/transaction.py):
   any error before it leaves every file as it was.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from ..emit.adopted_tests import emit_adopted_test
from ..errors import BackendYamlError, CoverageReportError
from ..model.coverage import CoverageReport, CoveredOp, OpPath
from ..model.outputs import GenerateOptions, OutputFile, stub_error
from ..model.project import ProjectNames
from ..model.selection import OpStatus, SelectedOp, Selection
from ..parse.backend_yaml import parse_backend_yaml
from ..parse.coverage_report import load_coverage_report
from ..parse.inputs import _read_text
from ..parse.installed_torch import find_installed_torch
from ..paths import display_path, display_paths
from ..write import transaction
from ..write.lock import output_lock
from ..write.plan import Action, Change, Plan
from ..write.uptodate import scaffold_is_missing
from ..write.yaml_edit import add_to_op_list
from .generate import GenerateResult, load_selection, prepare

SUPPORTED_KEY = "supported"
AUTOGRAD_KEY = "autograd"


@dataclass(frozen=True)
class AdoptRequest:
    report: Path
    top: int | None
    """The N first fallback ops of the report not in the YAML yet; None: `op_names`."""
    op_names: tuple[str, ...]
    dry_run: bool = False


@dataclass(frozen=True)
class Adoption:
    """One op of the report, taken."""

    op: CoveredOp
    yaml_key: str
    """The YAML list its group joins."""
    entries: tuple[str, ...]
    """The ops added to that list for it: its group's variants that would fall back."""
    kernel_file: Path
    test: OutputFile | None
    """None when the report kept no call signature of the op."""


@dataclass(frozen=True)
class AdoptResult:
    adoptions: tuple[Adoption, ...]
    generated: GenerateResult
    plan: Plan
    """Everything written: the YAML, the generation's changes, the tests."""


def _fail(report: CoverageReport, message: str, hint: str | None = None) -> CoverageReportError:
    return CoverageReportError(message, location=report.location, hint=hint)


def check_report_matches(report: CoverageReport, selection: Selection) -> None:
    """The report was recorded on this backend's device, with the torch the project generates
    for (its declarations' release; the installed one): its op names and recorded arguments are
    those of this build."""
    device = selection.config.device
    if report.device != device:
        raise _fail(
            report,
            f"a report of the '{report.device}' device; this project's backend is '{device}'",
            hint=f"record the workload with python -m {ProjectNames(device).package}.coverage",
        )
    declarations = selection.declarations
    generating_for = declarations.torch_version or find_installed_torch().version
    if report.torch != generating_for:
        raise _fail(
            report,
            f"recorded with torch {report.torch}; this project generates for torch {generating_for}",
            hint="record the workload again with the installed torch: op names and schemas change "
            "between releases",
        )


def _unknown_op(report: CoverageReport, name: str) -> CoverageReportError:
    names = sorted({op.name for op in report.ops} | {op.op_name for op in report.ops})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(found) for found in close)}?" if close else None
    fallback = [op.op_name for op in report.ranked_fallback_ops()[:5]]
    if hint is None and fallback:
        hint = f"its first fallback ops: {', '.join(fallback)}"
    return _fail(report, f"no op '{name}' in this report", hint=hint)


_NOT_FALLBACK = {
    OpPath.NATIVE: "already has a kernel of the backend (path: native)",
    OpPath.COMPOSITE: "is composite: PyTorch builds it from other ops, which have rows of their own; "
    "adopt those",
    OpPath.CUSTOM: "is a custom op with a device kernel (path: custom)",
    OpPath.OTHER: "did not run through the CPU fallback (path: other)",
}


def choose_ops(report: CoverageReport, request: AdoptRequest, selection: Selection) -> list[CoveredOp]:
    """The report's rows to adopt, in rank order (see the module docstring)."""
    if request.top is not None:
        candidates = [
            op for op in report.ranked_fallback_ops()
            if op.namespace == "aten" and _status(selection, op) is OpStatus.BOXED_FALLBACK
        ]
        if not candidates:
            raise _fail(
                report,
                "no op of this report ran through the CPU fallback that the backend YAML does not list already",
                hint="nothing to adopt: record the workload again after building the latest kernels",
            )
        return candidates[: request.top]
    chosen: dict[str, CoveredOp] = {}
    for name in request.op_names:
        op = report.find(name)
        if op is None:
            raise _unknown_op(report, name)
        if op.path is not OpPath.FALLBACK:
            raise _fail(report, f"'{op.name}' {_NOT_FALLBACK[op.path]}; adopt takes fallback ops")
        chosen.setdefault(op.name, op)
    return sorted(chosen.values(), key=lambda op: (-op.seconds, op.name))


def _status(selection: Selection, op: CoveredOp) -> OpStatus | None:
    declaration = selection.declarations.get(op.op_name)
    if declaration is None:
        return None
    return next(selected.status for selected in selection.ops if selected.declaration is declaration)


def _group(selection: Selection, op: CoveredOp) -> list[SelectedOp]:
    """The op's variants: its functional, in-place and out= forms (one signature once overload
    names and out arguments are set aside: torchgen's rule), the op itself among them."""
    declaration = selection.declarations.get(op.op_name)
    if op.namespace != "aten" or declaration is None:
        raise CoverageReportError(
            f"'{op.name}' is not an aten operator of {selection.declarations.description}",
            location=op.location,
            hint="adopt takes aten ops; an op of your own goes under the YAML's custom_ops",
        )
    signature = str(declaration.require_schema().signature())
    base = declaration.name.name.base
    return [
        selected for selected in selection.ops
        if selected.declaration.name.name.base == base
        and selected.declaration.schema is not None
        and str(selected.declaration.schema.signature()) == signature
    ]


@dataclass(frozen=True)
class _Addition:
    yaml_key: str
    entries: tuple[str, ...]
    kernel_group: str
    """The kernel file's group (kernels/<group>.cpp)."""
    stubbed: tuple[str, ...]
    """The group's ops that have, or now get, a kernel stub."""


def _entries_to_add(selection: Selection, op: CoveredOp) -> _Addition:
    """The YAML list the op's group joins, and what it adds there: the op and the variants that
    would fall back too (variants with a default kernel or already listed stay as they are)."""
    group = _group(selection, op)
    own = next(selected for selected in group if selected.op_name == op.op_name)
    if own.status is OpStatus.EXPLICIT_FALLBACK:
        raise CoverageReportError(
            f"'{op.op_name}' is under fallback.explicit in {selection.config.display_path}",
            location=op.location,
            hint="remove it from fallback.explicit first: an op is a kernel or an explicit fallback",
        )
    if own.status in (OpStatus.NATIVE, OpStatus.AUTOGRAD):
        raise CoverageReportError(
            f"'{op.op_name}' is listed under '{SUPPORTED_KEY if own.status is OpStatus.NATIVE else AUTOGRAD_KEY}' "
            f"in {selection.config.display_path} already",
            location=op.location,
            hint="the report is older than the YAML: build, record the workload again, and adopt from the new report",
        )
    if own.status is not OpStatus.BOXED_FALLBACK:
        raise CoverageReportError(
            f"'{op.op_name}' has a default kernel in {selection.declarations.description}, so it "
            "cannot have fallen back",
            location=op.location,
            hint="record the workload again with the installed torch",
        )
    key = AUTOGRAD_KEY if any(selected.status is OpStatus.AUTOGRAD for selected in group) else SUPPORTED_KEY
    entries = tuple(sorted(selected.op_name for selected in group if selected.status is OpStatus.BOXED_FALLBACK))
    kernel_statuses = (OpStatus.NATIVE, OpStatus.AUTOGRAD, OpStatus.BOXED_FALLBACK)
    stubbed = tuple(sorted(selected.op_name for selected in group if selected.status in kernel_statuses))
    return _Addition(key, entries, own.group, stubbed)


def _read_yaml(options: GenerateOptions) -> str:
    shown = display_path(options.yaml_path, options.root)
    return _read_text(options.yaml_path, "backend YAML", shown, BackendYamlError)


def plan_adoption(options: GenerateOptions, request: AdoptRequest, cwd: Path) -> AdoptResult:
    """Everything `adopt` would write, written nowhere yet."""
    report = load_coverage_report(request.report, cwd)
    selection = load_selection(options.yaml_path, options.declarations_path, options.root)
    check_report_matches(report, selection)
    config = selection.config
    additions = [(op, _entries_to_add(selection, op)) for op in choose_ops(report, request, selection)]
    text = _read_yaml(options)
    edited = text
    for key in (SUPPORTED_KEY, AUTOGRAD_KEY):
        names = [entry for _, addition in additions if addition.yaml_key == key for entry in addition.entries]
        edited = add_to_op_list(edited, config.display_path, key, list(dict.fromkeys(names)))
    generated = prepare(options, config=parse_backend_yaml(edited, display_path=config.display_path))

    layout = options.layout
    package = ProjectNames(config.device).package
    report_shown = display_path(request.report, layout.root)
    adoptions = []
    test_changes = []
    for op, addition in additions:
        test = None
        if op.signatures:
            stub_errors = [stub_error(config.device, name) for name in addition.stubbed]
            test = emit_adopted_test(op, addition.kernel_group, stub_errors, report, report_shown, package, layout)
            if scaffold_is_missing(test.path):
                test_changes.append(Change(test.path, Action.CREATE, test.content))
        adoptions.append(
            Adoption(op, addition.yaml_key, addition.entries, layout.stub_path(addition.kernel_group), test)
        )
    yaml_change = [Change(options.yaml_path, Action.UPDATE, edited)] if edited != text else []
    plan = Plan((*yaml_change, *generated.plan.changes, *test_changes))
    return AdoptResult(adoptions=tuple(adoptions), generated=generated, plan=plan)


def adopt(options: GenerateOptions, request: AdoptRequest, cwd: Path) -> AdoptResult:
    """Plan, then (unless a dry run) write it all as one transaction under the output lock; an
    interrupted earlier run is completed first, as `generate` does."""
    layout = options.layout
    if request.dry_run:
        with output_lock(layout, create=False):
            return plan_adoption(options, request, cwd)
    with output_lock(layout):
        transaction.recover(layout)
        result = plan_adoption(options, request, cwd)
        known = [change.path for change in result.plan.changes]
        known += [kernel.output.path for kernel in result.generated.kernel_files]
        transaction.remove_stale_temporaries(known, layout)
        transaction.commit(result.plan, layout)
    return result


_VERBS = {
    Action.CREATE: ("create", "created"),
    Action.UPDATE: ("update", "updated"),
    Action.DELETE: ("delete", "deleted"),
    Action.MERGE: ("merge", "merged"),
    Action.CONFLICT: ("conflict", "conflict"),
}


def adopt_report(result: AdoptResult, root: Path, *, planned: bool) -> list[str]:
    """What `adopt` prints: per op, what joined the YAML and where its kernel and test are; then
    the files written."""
    lines = []
    for adoption in result.adoptions:
        test = display_path(adoption.test.path, root) if adoption.test else "none (the report kept no call signature)"
        lines.append(
            f"{'adopt' if planned else 'adopted'} {adoption.op.name} ({adoption.op.calls} calls, "
            f"{adoption.op.seconds:.4f} s on the CPU fallback): {adoption.yaml_key} += "
            f"{', '.join(adoption.entries)}; kernel {display_path(adoption.kernel_file, root)}; test {test}"
        )
    changes = result.plan.changes
    for change, shown in zip(changes, display_paths([change.path for change in changes], root), strict=True):
        lines.append(f"{_VERBS[change.action][0 if planned else 1]:>9}  {shown}")
    return lines
