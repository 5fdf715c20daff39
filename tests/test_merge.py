"""Regeneration keeps user code: the kernel-file merge, driven through `generate`."""

from __future__ import annotations

import shutil
from pathlib import Path

from scaffold_testing import TESTS, run_cli_process

DATA = TESTS / "data"
ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "generated"]
YAML = "backend: PrivateUse1\ncpp_namespace: tiny\ndevice: tiny\nsupported:\n  - view\n  - tril.out\n"


def setup(tmp_path: Path, yaml_text: str = YAML) -> Path:
    shutil.copy(DATA / "declarations_2.13_subset.h", tmp_path / "decls.h")
    (tmp_path / "backend.yaml").write_text(yaml_text)
    process = run_cli_process(ARGS, tmp_path)
    assert process.returncode == 0, process.stderr
    return tmp_path


def regenerate(root: Path, yaml_text: str) -> tuple[int, str, str]:
    (root / "backend.yaml").write_text(yaml_text)
    process = run_cli_process(ARGS, root)
    return process.returncode, process.stdout, process.stderr


BODY = """\
  // A user's kernel: every byte of this must survive regeneration.
  auto host = self;  \t// odd spacing kept
  return host.view_as(host);
"""


def implement(path: Path, head: str) -> str:
    """Replace the stub body under `head` with BODY; return the new file text."""
    text = path.read_text()
    start = text.index(head)
    body_start = text.index("\n", start) + 1
    body_end = text.index("}\n", body_start)
    text = text[:body_start] + BODY + text[body_end:]
    path.write_text(text)
    return text


def test_signature_change_is_merged_into_an_edited_stub(tmp_path: Path) -> None:
    root = setup(tmp_path)
    stub = root / "kernels" / "view.cpp"
    edited = implement(stub, "at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {")
    # Listing view under symint changes its kernel's signature (and name).
    code, out, err = regenerate(root, YAML + "symint:\n  - view\n")
    assert code == 0, err
    assert "   merged  kernels/view.cpp" in out
    merged = stub.read_text()
    assert merged == edited.replace(
        "at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {",
        "at::Tensor view_symint(const at::Tensor & self, c10::SymIntArrayRef size) {",
    )
    assert BODY in merged


def test_untouched_stub_is_regenerated_and_edited_unrelated_stub_untouched(tmp_path: Path) -> None:
    root = setup(tmp_path)
    tril = root / "kernels" / "tril.cpp"
    tril_text = implement(tril, "at::Tensor & tril_out(")
    view = root / "kernels" / "view.cpp"
    code, out, _ = regenerate(root, YAML + "symint:\n  - view\n")
    assert code == 0
    assert "  updated  kernels/view.cpp" in out
    assert "view_symint" in view.read_text() and "TORCH_CHECK_NOT_IMPLEMENTED" in view.read_text()
    assert tril.read_text() == tril_text  # signature unchanged: never touched
    code, out, _ = regenerate(root, YAML + "symint:\n  - view\n")
    assert out.strip().endswith("everything up to date")


def test_new_op_in_an_edited_group_is_appended(tmp_path: Path) -> None:
    root = setup(tmp_path)
    stub = root / "kernels" / "view.cpp"
    edited = implement(stub, "at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {")
    code, out, err = regenerate(root, YAML + "  - view.dtype\n")
    assert code == 0, err
    merged = stub.read_text()
    assert merged.startswith(edited[: edited.index("}  // namespace tiny")])
    assert "at::Tensor view(const at::Tensor & self, at::ScalarType dtype) {\n  TORCH_CHECK_NOT_IMPLEMENTED" in merged
    assert merged.endswith("}\n\n}  // namespace tiny\n")


def test_new_op_the_user_already_wrote_is_not_added_twice(tmp_path: Path) -> None:
    """A kernel written by hand before its op joins the YAML (here reformatted, as a user
    would) counts as defined: the merge adds no second definition, which would not compile."""
    root = setup(tmp_path)
    stub = root / "kernels" / "view.cpp"
    edited = implement(stub, "at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {")
    ahead = "at::Tensor\nview(const at::Tensor& self,\n     at::ScalarType dtype) {\n  return self.view(dtype);\n}\n\n"
    edited = edited.replace("}  // namespace tiny", ahead + "}  // namespace tiny")
    stub.write_text(edited)
    code, out, err = regenerate(root, YAML + "  - view.dtype\n")
    assert code == 0, err
    assert stub.read_text() == edited
    code, out, err = regenerate(root, YAML + "  - view.dtype\n")
    assert code == 0 and out.strip().endswith("everything up to date"), out + err


def test_reformatted_signature_conflicts_with_markers_and_exit_1(tmp_path: Path) -> None:
    root = setup(tmp_path)
    stub = root / "kernels" / "view.cpp"
    text = (
        stub.read_text()
        .replace(
            "at::Tensor view(const at::Tensor & self, at::IntArrayRef size) {",
            "at::Tensor view(const at::Tensor& self,\n                at::IntArrayRef size) {",
        )
        .replace(
            '  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::view has',
            '  return self.alias();\n  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::view has',
        )
    )
    stub.write_text(text)
    code, out, err = regenerate(root, YAML + "symint:\n  - view\n")
    assert code == 1
    assert err.startswith("error: file(s) with unresolved merge conflicts: kernels/view.cpp")
    merged = stub.read_text()
    assert "<<<<<<< yours" in merged and ">>>>>>> scaffold-backend" in merged
    assert "  return self.alias();\n" in merged
    # Until the user resolves it, every run and --check keeps failing on the same file.
    check = run_cli_process([*ARGS, "--check"], root)
    assert check.returncode == 1
    assert check.stderr.startswith("error: file(s) with unresolved merge conflicts: kernels/view.cpp")
    again = run_cli_process(ARGS, root)
    assert again.returncode == 1 and stub.read_text() == merged
    resolved = (
        merged.split("<<<<<<< yours\n")[0]
        + merged.split("=======\n")[1].split(">>>>>>> scaffold-backend\n")[0]
        + merged.split(">>>>>>> scaffold-backend\n")[1]
    )
    stub.write_text(resolved)
    assert run_cli_process([*ARGS, "--check"], root).returncode == 0


def test_removed_op_keeps_its_code_and_is_reported(tmp_path: Path) -> None:
    root = setup(tmp_path, YAML + "  - view.dtype\n")
    stub = root / "kernels" / "view.cpp"
    edited = implement(stub, "at::Tensor view(const at::Tensor & self, at::ScalarType dtype) {")
    code, out, err = regenerate(root, YAML)
    assert code == 0
    assert stub.read_text() == edited
    assert "note: kernels/view.cpp still defines kernels for view.dtype, which are no longer generated" in err
