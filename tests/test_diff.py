"""`scaffold-backend diff` on the real headers of torch 2.9.0, 2.12.0 and 2.13.0 (vendored, so the
figures do not depend on the installed torch)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from scaffold_testing import REPO, TESTS, fake_torch_installation, run_cli_process, shared_header

from scaffold_backend.commands.diff import ChangeKind, FlagChange, diff_declarations
from scaffold_backend.commands.diff_report import flags_text, schema_change_texts
from scaffold_backend.errors import ProjectConfigError
from scaffold_backend.model.declarations import DeclarationsFile
from scaffold_backend.parse.inputs import load_declarations
from scaffold_backend.parse.torch_support import torch_support

SCALED_MM_V2_FAMILY = {"_scaled_mm_v2", "_scaled_mm_v2.out", "_scaled_grouped_mm_v2"}


@pytest.fixture(scope="module")
def torch_2_13() -> DeclarationsFile:
    """torch 2.13.0's header: the release these figures were measured against."""
    return load_declarations(shared_header("2.13.0"), Path.cwd())


def test_2_9_to_2_13_names_exactly_the_real_changes(torch_2_13: DeclarationsFile) -> None:
    old = load_declarations(shared_header("2.9.0"), Path.cwd())
    diff = diff_declarations(old, torch_2_13)
    schema = {change.op_name: tuple(schema_change_texts(change)) for change in diff.of_kind(ChangeKind.SCHEMA)}
    assert schema == {
        "tril": ("argument 'diagonal': int -> SymInt",),
        "tril.out": ("argument 'diagonal': int -> SymInt",),
        "tril_": ("argument 'diagonal': int -> SymInt",),
        "triu": ("argument 'diagonal': int -> SymInt",),
        "triu.out": ("argument 'diagonal': int -> SymInt",),
        "triu_": ("argument 'diagonal': int -> SymInt",),
        "_flash_attention_forward": (
            "argument 'block_table' (Tensor? = None, keyword-only) added",
            "argument 'num_splits' (int? = None, keyword-only) added",
        ),
        "_scaled_dot_product_attention_math_for_mps": (
            "argument 'enable_gqa' (bool = False, keyword-only) added",
        ),
    }
    added_required = {c.op_name for c in diff.of_kind(ChangeKind.ADDED) if c.new is not None and c.new.required}
    assert added_required >= SCALED_MM_V2_FAMILY and len(added_required) == 16
    flags = {c.op_name: (c.flag_change, flags_text(c)) for c in diff.of_kind(ChangeKind.FLAGS)}
    assert flags["ldexp.Tensor"] == (FlagChange.OTHER, "dispatch False -> True, default True -> True")
    assert set(flags) == {"ldexp.Tensor", "ldexp.out", "ldexp_", "_grid_sampler_2d_cpu_fallback_backward"}
    assert diff.of_kind(ChangeKind.SPELLING) == []
    assert len(diff.of_kind(ChangeKind.REMOVED)) == 116


def test_2_12_to_2_13_removes_named_tensor_overloads(torch_2_13: DeclarationsFile) -> None:
    old = load_declarations(shared_header("2.12.0"), Path.cwd())
    diff = diff_declarations(old, torch_2_13)
    assert [c.op_name for c in diff.of_kind(ChangeKind.ADDED)] == ["_foreach_mm"]
    removed = diff.of_kind(ChangeKind.REMOVED)
    assert len(removed) == 116
    assert all(c.old is not None and ("Dimname" in c.old.schema_text or "dimname" in c.op_name.lower()
                                      or c.op_name.startswith(("align", "refine_names", "rename")))
               for c in removed)
    assert diff.of_kind(ChangeKind.SCHEMA) == [] and diff.of_kind(ChangeKind.FLAGS) == []


def test_cpp_spelling_is_not_a_signature_change(tmp_path: Path) -> None:
    new = TESTS / "data" / "declarations_2.13_subset.h"
    old_text = new.read_text().replace("::std::optional", "c10::optional").replace("at::Tensor &", "Tensor &")
    (tmp_path / "old.h").write_text(old_text)
    diff = diff_declarations(load_declarations(tmp_path / "old.h", tmp_path), load_declarations(new, tmp_path))
    spelling = [c.op_name for c in diff.of_kind(ChangeKind.SPELLING)]
    assert "empty.memory_format" in spelling and "abs.out" in spelling
    assert (
        diff.of_kind(ChangeKind.SCHEMA) == []
        and diff.of_kind(ChangeKind.ADDED) == []
        and diff.of_kind(ChangeKind.REMOVED) == []
    )


def test_text_markdown_and_json_with_a_backend(tmp_path: Path) -> None:
    (tmp_path / "backend.yaml").write_text(
        "backend: PrivateUse1\ncpp_namespace: up\ndevice: up\n"
        "supported: [tril.out, triu.out, mm.out, ldexp.out]\nsymint: [triu.out]\n"
    )
    args = [
        "diff",
        str(shared_header("2.9.0")),
        str(fake_torch_installation(tmp_path, "2.13.0")),
        "--yaml",
        "backend.yaml",
    ]
    text = run_cli_process(args, tmp_path)
    assert text.returncode == 0, text.stderr
    assert (
        "  triu.out [supported]: kernel signature changes: at::Tensor & triu_out_symint(const at::Tensor & self, "
        "int64_t diagonal, at::Tensor & out) -> at::Tensor & triu_out_symint(const at::Tensor & self, c10::SymInt "
        "diagonal, at::Tensor & out)\n"
        "      -> regenerate: the new signature is merged into your kernel file; review the body\n" in text.stdout
    )
    assert "  tril.out [supported]: schema changed; your kernel's signature did not\n" in text.stdout
    markdown = run_cli_process([*args, "--format", "markdown"], tmp_path)
    assert markdown.returncode == 0
    lines = markdown.stdout.splitlines()
    assert lines[0].startswith("### PyTorch operator changes: ")
    # Short enough to paste into a PR description: long lists fold into <details> paragraphs.
    assert len(lines) < 60 and len(markdown.stdout) < 8000
    assert "| `_flash_attention_forward.quantized`, `_flash_attention_forward_no_dropout_inplace`" in markdown.stdout
    document = json.loads(run_cli_process([*args, "--format", "json"], tmp_path).stdout)
    assert set(document) == {"old", "new", "summary", "ops", "backend"}
    assert document["new"]["torch_version"] == "2.13.0"
    assert document["summary"]["added_required"] == 16
    tril = next(op for op in document["ops"] if op["op"] == "tril.out")
    assert tril["kinds"] == ["schema"] and tril["old"]["cpp"].endswith("int64_t diagonal, at::Tensor & out)")
    impacts = {impact["op"]: impact for impact in document["backend"]["impacts"]}
    assert impacts["triu.out"]["kernel_file"] == "kernels/triu.cpp"
    assert "_scaled_mm_v2" in impacts and impacts["_scaled_mm_v2"]["listed_under"] is None


def test_removed_op_in_the_yaml_names_its_likely_replacement(tmp_path: Path) -> None:
    (tmp_path / "backend.yaml").write_text(
        "backend: PrivateUse1\ncpp_namespace: up\nsupported: [sum.dim_DimnameList]\n"
    )
    torch_2_13 = fake_torch_installation(tmp_path, "2.13.0")
    result = run_cli_process(
        ["diff", str(shared_header("2.12.0")), str(torch_2_13), "--yaml", "backend.yaml"], tmp_path
    )
    assert (
        "  sum.dim_DimnameList [supported]: removed from PyTorch\n"
        "      -> remove it from 'supported' in backend.yaml; likely replacement: 'sum.dim_IntList'; its kernel "
        "stays in the file and is reported until you delete it\n" in result.stdout
    )
    header = torch_2_13 / "include" / "ATen" / "RegistrationDeclarations.h"
    generate = run_cli_process(
        ["generate", "--yaml", "backend.yaml", "--out", "generated", "--declarations", str(header)], tmp_path
    )
    assert generate.returncode == 2
    assert generate.stderr == (
        "error: backend.yaml:3: unknown operator 'sum.dim_DimnameList' under 'supported': "
        "torch-2.13.0/torch/include/ATen/RegistrationDeclarations.h has no such operator\n"
        "  hint: did you mean 'sum.dim_IntList', 'sum.IntList_out', 'sum.out'?\n"
    )


@pytest.mark.parametrize(
    ("setup", "argument", "message"),
    [
        (
            lambda d: (d / "backend.yaml").write_text("backend: PrivateUse1\n"),
            "backend.yaml",
            "error: backend.yaml:1: OLD is not a readable RegistrationDeclarations.h: malformed declaration: "
            'expected \'<C++ declaration>; // {"schema": ..., "dispatch": ..., "default": ...}\'',
        ),
        (
            lambda d: None,
            "missing.h",
            "error: missing.h: OLD is not a readable RegistrationDeclarations.h: declarations file not found",
        ),
        (
            lambda d: (d / "empty").mkdir(),
            "empty",
            "error: empty: OLD is not a readable RegistrationDeclarations.h: is a directory without a "
            "RegistrationDeclarations.h (looked for include/ATen/RegistrationDeclarations.h, "
            "torch/include/ATen/RegistrationDeclarations.h, ATen/RegistrationDeclarations.h, "
            "RegistrationDeclarations.h)",
        ),
        (
            lambda d: (d / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe"),
            "blob.bin",
            "error: blob.bin:1: OLD is not a readable RegistrationDeclarations.h: declarations file is not UTF-8 text "
            "(byte 0x89)",
        ),
        (
            lambda d: (d / "notes.h").write_text("// just a comment\n"),
            "notes.h",
            "error: notes.h: OLD is not a readable RegistrationDeclarations.h: no operator declarations found: "
            "is this a RegistrationDeclarations.h?",
        ),
    ],
)
def test_inputs_that_are_not_declarations_files(
    tmp_path: Path, setup: Callable[[Path], object], argument: str, message: str
) -> None:
    setup(tmp_path)
    result = run_cli_process(["diff", argument, "installed"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == message
    assert result.stderr.splitlines()[1] == (
        "  hint: diff compares two RegistrationDeclarations.h files, torch installations, or `installed` "
        "(the current torch)"
    )
    assert "Traceback" not in result.stderr


def test_a_torch_installation_directory_is_accepted(tmp_path: Path) -> None:
    fake_torch = tmp_path / "site-packages" / "torch"
    (fake_torch / "include" / "ATen").mkdir(parents=True)
    shutil.copy(shared_header("2.12.0"), fake_torch / "include" / "ATen" / "RegistrationDeclarations.h")
    (fake_torch / "version.py").write_text("__version__ = '2.12.0+cpu'\ngit_version = 'x'\n")
    result = run_cli_process(["diff", str(fake_torch), "installed", "--format", "json"], tmp_path)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["old"] == {"path": "torch/include/ATen/RegistrationDeclarations.h", "torch_version": "2.12.0"}


PR_LIMIT = 65_536  # a GitHub pull-request description


def test_markdown_report_of_a_real_jump_fits_a_pr_and_leads_with_the_backend(tmp_path: Path) -> None:
    args = ["diff", str(shared_header("2.9.0")), str(shared_header("2.14.1")),
            "--yaml", str(REPO / "yaml" / "foo.yaml"), "--format", "markdown"]
    report = run_cli_process(args, tmp_path)
    assert report.returncode == 0, report.stderr
    assert len(report.stdout) < PR_LIMIT
    text = report.stdout
    assert text.index("#### What this means for") < text.index("#### All operator changes")
    assert "| --- | --- | --- |" in text.split("#### All operator changes")[0]


def _synthetic_jump(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """Every one of torch 2.14.1's 3,103 ops renamed: 3,103 removed and 3,103 added."""
    old = shared_header("2.14.1")
    new = tmp_path / "renamed.h"
    new.write_text(old.read_text().replace('"schema": "aten::', '"schema": "aten::zz_synthetic_renamed_'))
    names = [op.op_name for op in load_declarations(old, tmp_path)]
    return old, new, names


def test_markdown_report_of_a_synthetic_worst_case_still_fits(tmp_path: Path) -> None:
    old, new, names = _synthetic_jump(tmp_path)
    # The backend's own ops come first and in full; the 6,206 other changes are counted and cut.
    (tmp_path / "foo.yaml").write_text((REPO / "yaml" / "foo.yaml").read_text())
    report = run_cli_process(["diff", str(old), str(new), "--yaml", "foo.yaml", "--format", "markdown"], tmp_path)
    assert report.returncode == 0, report.stderr
    text = report.stdout
    assert len(text) < PR_LIMIT
    assert "3103 added (858 required), 3103 removed" in text
    assert "`mm.out` (`supported`)" in text and "`add.out` (`supported`)" in text
    assert "<summary>show all 3103</summary>" in text and "more" in text
    assert "`scaffold-backend diff --format json` lists every change" in text
    as_json = run_cli_process(["diff", str(old), str(new), "--yaml", "foo.yaml", "--format", "json"], tmp_path)
    document = json.loads(as_json.stdout)
    assert len(document["ops"]) == 6206  # the JSON keeps everything

    # A backend listing 1,200 of the vanished ops: even its own table is cut at a line, and says so.
    (tmp_path / "big.yaml").write_text(
        "backend: PrivateUse1\ncpp_namespace: big\nfallback:\n  explicit:\n"
        + "".join(f"    - {n}\n" for n in names[:1200])
    )
    report = run_cli_process(["diff", str(old), str(new), "--yaml", "big.yaml", "--format", "markdown"], tmp_path)
    assert report.returncode == 0, report.stderr
    assert len(report.stdout) < PR_LIMIT
    assert report.stdout.endswith("_The report is cut here to fit a pull request; `--format json` has every change._\n")


def test_a_release_newer_than_the_tool_knows_is_reported_and_refused_with_what_to_do(tmp_path: Path) -> None:
    """A torch the tool has never seen (2.99 here: 2.15.0's header plus an op backends must
    register): `diff` reports it against the newest supported release; `init`/`generate` would stop
    with the supported range and what to do (the check both call)."""
    newest = fake_torch_installation(tmp_path / "newest", "2.15.0")
    unknown = fake_torch_installation(tmp_path / "unknown", "2.15.0")
    header = unknown / "include" / "ATen" / "RegistrationDeclarations.h"
    header.write_text(
        header.read_text()
        + 'at::Tensor _future_op(const at::Tensor & self); // {"schema": "aten::_future_op(Tensor self) -> Tensor", '
        '"dispatch": "True", "default": "False"}\n'
    )
    (unknown / "version.py").write_text("__version__ = '2.99.0'\n")
    report = run_cli_process(["diff", str(newest), str(unknown), "--yaml", str(REPO / "yaml" / "foo.yaml")], tmp_path)
    assert report.returncode == 0, report.stderr
    assert "(torch 2.99.0)" in report.stdout and "1 added (1 required)" in report.stdout
    assert "_future_op: new op that backends must register" in report.stdout
    with pytest.raises(ProjectConfigError) as refused:
        torch_support().check("2.99.0")
    message = refused.value
    assert "torch 2.99.0 is installed, but the backends scaffold-backend generates support torch>=2.11," in str(message)
    assert "pip install --upgrade scaffold-backend" in (message.hint or "")
