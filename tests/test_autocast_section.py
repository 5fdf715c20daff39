"""The backend YAML's `autocast:` section: ops added to PyTorch's autocast lists for the device,
checked against the installed torch's declarations and PyTorch's own lists, and emitted into
RegisterAutocastPrivateUse1.cpp. The casts themselves are tested on foo
(tests/backend/test_autocast.py)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from scaffold_testing import REPO, run_cli_process

from scaffold_backend.errors import BackendYamlError
from scaffold_backend.model.backend import AutocastPolicy
from scaffold_backend.model.declarations import DeclarationsFile
from scaffold_backend.parse.backend_yaml import parse_backend_yaml
from scaffold_backend.parse.inputs import load_declarations
from scaffold_backend.select.selection import select

HEAD = "backend: PrivateUse1\ncpp_namespace: tiny\ndevice: tiny\nautocast:\n"


@functools.cache
def installed_declarations() -> DeclarationsFile:
    return load_declarations(None, REPO)


def selection_error(text: str) -> str:
    with pytest.raises(BackendYamlError) as error:
        select(parse_backend_yaml(text, display_path="b.yaml"), installed_declarations())
    return str(error.value)


def test_the_section_resolves_to_declarations_sorted_by_name() -> None:
    config = parse_backend_yaml(
        HEAD + "  promote: [lerp.Scalar]\n  lower_precision_fp:\n    - outer\n  fp32: [sqrt]\n",
        display_path="b.yaml",
    )
    selection = select(config, installed_declarations())
    assert [(op.op_name, op.policy, op.location.line) for op in selection.autocast] == [
        ("lerp.Scalar", AutocastPolicy.PROMOTE, 5),
        ("outer", AutocastPolicy.LOWER_PRECISION_FP, 7),
        ("sqrt", AutocastPolicy.FP32, 8),
    ]


def test_an_empty_section_adds_nothing() -> None:
    assert parse_backend_yaml(HEAD, display_path="b.yaml").autocast == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEAD + "  lower_precision_fp: [outr]\n",
            "b.yaml:5: unknown operator 'outr' under 'autocast.lower_precision_fp': ",
        ),
        (
            HEAD + "  fp32: [mm]\n",
            "b.yaml:5: 'mm' is on PyTorch's autocast lists already ('autocast.fp32')\n  hint: the "
            "'autocast' section adds ops PyTorch does not cast; to change how PyTorch's own lists treat "
            "an op, edit the runtime's csrc/ops/autocast.cpp",
        ),
        (
            HEAD + "  fp32: [sqrt.out]\n",
            "b.yaml:5: 'sqrt.out' is an out op; autocast casts the arguments of functional ops "
            "('autocast.fp32')\n  hint: list the functional variant (e.g. gelu rather than gelu.out or gelu_)",
        ),
        (
            HEAD + "  fp32: [sqrt_]\n",
            "b.yaml:5: 'sqrt_' is an inplace op; autocast casts the arguments of functional ops "
            "('autocast.fp32')\n  hint: list the functional variant (e.g. gelu rather than gelu.out or gelu_)",
        ),
        (
            HEAD + "  fp32: [sqrt]\n  promote:\n    - sqrt\n",
            "b.yaml:7: 'sqrt' is listed twice in 'autocast' (first under 'autocast.fp32' at line 5)\n"
            "  hint: an op is on one autocast list",
        ),
    ],
)
def test_bad_entries_are_one_error_with_the_line(text: str, message: str) -> None:
    assert selection_error(text).startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEAD + "  fp16: [outer]\n",
            "b.yaml:5: unknown key 'fp16' in 'autocast'\n  hint: valid keys: lower_precision_fp, fp32, promote",
        ),
        (
            HEAD + "  fp32: outer\n",
            "b.yaml:5: 'autocast.fp32' must be a list",
        ),
        (
            "backend: XLA\ncpp_namespace: tiny\nautocast:\n  fp32: [sqrt]\n",
            "b.yaml:3: 'autocast' extends the autocast lists of PrivateUse1 (AutocastPrivateUse1); the "
            "backend is XLA\n  hint: remove the 'autocast' section, or register AutocastPrivateUse1 "
            "kernels yourself",
        ),
    ],
)
def test_bad_section_shapes_are_one_error_with_the_line(text: str, message: str) -> None:
    with pytest.raises(BackendYamlError) as error:
        parse_backend_yaml(text, display_path="b.yaml")
    assert str(error.value) == message


def test_generate_emits_the_registration_and_stops_on_an_unknown_op(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    yaml_path = root / "backend.yaml"
    args = ["generate", "--yaml", "backend.yaml", "--out", "generated", "--kernels", "kernels"]
    yaml_path.write_text(HEAD + "  lower_precision_fp: [outer]\n  promote: [lerp.Tensor]\n")
    process = run_cli_process(args, root)
    assert process.returncode == 0, process.stderr
    registration = (root / "generated" / "RegisterAutocastPrivateUse1.cpp").read_text()
    assert "TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {\n" \
        "  KERNEL_PRIVATEUSEONE(lerp, Tensor, promote)  // aten::lerp.Tensor\n" \
        "  KERNEL_PRIVATEUSEONE(outer, lower_precision_fp)  // aten::outer\n}\n" in registration
    assert '"${CMAKE_CURRENT_LIST_DIR}/RegisterAutocastPrivateUse1.cpp"' in (
        root / "generated" / "sources.cmake"
    ).read_text()

    yaml_path.write_text(HEAD + "  lower_precision_fp: [outer]\n  promote: [lerp.Tensr]\n")
    before = (root / "generated" / "RegisterAutocastPrivateUse1.cpp").read_text()
    process = run_cli_process(args, root)
    assert process.returncode != 0
    assert process.stderr.startswith(
        "error: backend.yaml:6: unknown operator 'lerp.Tensr' under 'autocast.promote'"
    )
    assert "Traceback" not in process.stderr
    assert (root / "generated" / "RegisterAutocastPrivateUse1.cpp").read_text() == before

    # The section removed: the registration goes with it.
    yaml_path.write_text("backend: PrivateUse1\ncpp_namespace: tiny\ndevice: tiny\n")
    assert run_cli_process(args, root).returncode == 0
    assert not (root / "generated" / "RegisterAutocastPrivateUse1.cpp").exists()
