"""The upgrade workflow on real data: a backend generated against torch 2.9.0, its kernels written
by hand, then upgraded to the installed torch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scaffold_testing import (
    INSTALLED_TORCH,
    TESTS,
    Toolchain,
    build_generated_tree,
    compile_all,
    python_without_autoload,
    run_cli_process,
    shared_header,
    tree,
)

YAML_2_9 = """\
backend: PrivateUse1
cpp_namespace: upgraded
device: upgraded
device_guard: true
shards: 2
supported:
  - tril.out
  - triu.out
  - _scaled_mm
  - _scaled_mm.out
  - abs.out
symint:
  - triu.out
fallback:
  never: [ldexp.out]
"""

TRIL_BODY = """\
  // Written by hand against torch 2.9: keep every byte, including this odd   spacing.
  TORCH_CHECK(diagonal > -1000000, "tril: diagonal out of range");\t// tab-terminated
  return out.copy_(self.tril(diagonal));
"""
TRIU_BODY = """\
  // triu's kernel takes SymInt from 2.13 on; triu_symint accepts both spellings.
  const auto& d = diagonal;
  return out.copy_(self.triu_symint(d));
"""


def _replace_body(path: Path, head: str, body: str) -> None:
    text = path.read_text()
    start = text.index(head)
    body_start = text.index("\n", start) + 1
    body_end = text.index("}\n", body_start)
    path.write_text(text[:body_start] + body + text[body_end:])


def _generate(root: Path, *extra: str) -> tuple[int, str, str]:
    process = run_cli_process(["generate", "--yaml", "backend.yaml", "--out", "generated", *extra], root)
    return process.returncode, process.stdout, process.stderr


@pytest.mark.slow
def test_upgrade_from_2_9_keeps_user_code_and_compiles(tmp_path: Path, toolchain: Toolchain) -> None:
    root = tmp_path
    (root / "backend.yaml").write_text(YAML_2_9)
    old_header = shared_header("2.9.0")
    code, _, err = _generate(root, "--declarations", str(old_header))
    assert code == 0, err
    tril, triu = root / "kernels" / "tril.cpp", root / "kernels" / "triu.cpp"
    _replace_body(
        tril, "at::Tensor & tril_out(const at::Tensor & self, int64_t diagonal, at::Tensor & out) {", TRIL_BODY
    )
    # triu is listed under symint, but torch 2.9's schema says `int diagonal`: int64_t, for now.
    _replace_body(
        triu, "at::Tensor & triu_out_symint(const at::Tensor & self, int64_t diagonal, at::Tensor & out) {", TRIU_BODY
    )
    before = tree(root / "kernels")
    manifest_before = json.loads((root / "generated" / "scaffold_manifest.json").read_text())
    assert manifest_before["inputs"]["declarations"]["path"].endswith("torch-2.9.0/RegistrationDeclarations.h")

    # 1. The diff a reviewer reads before upgrading names exactly the real changes for this backend.
    diff = run_cli_process(["diff", str(old_header), "installed", "--yaml", "backend.yaml", "--format", "json"], root)
    assert diff.returncode == 0, diff.stderr
    impacts = {i["op"]: i for i in json.loads(diff.stdout)["backend"]["impacts"]}
    assert impacts["tril.out"]["change"] == "schema changed; your kernel's signature did not"
    assert impacts["triu.out"]["change"] == (
        "kernel signature changes: "
        "at::Tensor & triu_out_symint(const at::Tensor & self, int64_t diagonal, at::Tensor & out) -> "
        "at::Tensor & triu_out_symint(const at::Tensor & self, c10::SymInt diagonal, at::Tensor & out)"
    )
    assert impacts["triu.out"]["kernel_file"] == "kernels/triu.cpp"
    new_required = {op for op, i in impacts.items() if i["change"] == "new op that backends must register"}
    # Which of the v2 family must be registered varies by release (2.14 made the functional forms
    # composite); the out= form is required from 2.13 on.
    assert "_scaled_mm_v2.out" in new_required
    assert set(impacts) == {"tril.out", "triu.out"} | new_required  # nothing else touches this backend

    # 2. --check against the new torch is the CI gate: stale, exit 1.
    check = run_cli_process(["generate", "--yaml", "backend.yaml", "--out", "generated", "--check"], root)
    assert (
        check.returncode == 1
        and f"are stale against torch/include/ATen/RegistrationDeclarations.h (torch {INSTALLED_TORCH})" in check.stderr
    )

    # 3. Regenerate against the installed torch: triu's stub is merged, tril's is untouched.
    code, out, err = _generate(root)
    assert code == 0, err
    assert "   merged  kernels/triu.cpp" in out and "kernels/tril.cpp" not in out
    after = tree(root / "kernels")
    assert after["tril.cpp"] == before["tril.cpp"]
    assert TRIL_BODY.encode() in after["tril.cpp"] and TRIU_BODY.encode() in after["triu.cpp"]
    assert after["triu.cpp"] == before["triu.cpp"].replace(
        b"triu_out_symint(const at::Tensor & self, int64_t diagonal, at::Tensor & out)",
        b"triu_out_symint(const at::Tensor & self, c10::SymInt diagonal, at::Tensor & out)",
    )
    wrapper = (root / "generated" / "native" / "tril.h").read_text()
    assert "at::Tensor & tril_out(const at::Tensor & self, int64_t diagonal, at::Tensor & out);" in wrapper

    # 4. The user adopts the new op family: one new kernel file, nothing else of theirs changes.
    (root / "backend.yaml").write_text(
        YAML_2_9.replace("  - abs.out\n", "  - abs.out\n  - _scaled_mm_v2\n  - _scaled_mm_v2.out\n")
    )
    code, out, err = _generate(root)
    assert code == 0, err
    final = tree(root / "kernels")
    assert set(final) - set(after) == {"_scaled_mm_v2.cpp"}
    assert {name: final[name] for name in after} == after
    assert _generate(root, "--check")[0] == 0

    # 5. It compiles against the installed torch and every kernel registers.
    library = build_generated_tree(toolchain, root, "libupgraded.so")
    ops = ["tril.out", "triu.out", "_scaled_mm", "_scaled_mm.out", "abs.out", "_scaled_mm_v2", "_scaled_mm_v2.out"]
    process = python_without_autoload(
        "import json, sys, torch\ntorch.ops.load_library(sys.argv[1])\n"
        "print(json.dumps([op for op in json.loads(sys.argv[2]) "
        "if not torch._C._dispatch_has_kernel_for_dispatch_key('aten::' + op, 'PrivateUse1')]))",
        str(library), json.dumps(ops),
    )
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout) == []


def test_removed_op_stub_is_kept_reported_and_left_out_of_the_build(tmp_path: Path) -> None:
    """An op that disappears from PyTorch: its YAML entry is an error naming the replacement, and
    once the entry goes, its kernel file stays (excluded from the build) until the user deletes it."""
    header = tmp_path / "decls.h"
    shutil.copy(TESTS / "data" / "declarations_2.13_subset.h", header)
    (tmp_path / "backend.yaml").write_text(
        "backend: PrivateUse1\ncpp_namespace: gone\nsupported: [tril.out, abs.out]\n"
    )
    code, _, err = _generate(tmp_path, "--declarations", "decls.h")
    assert code == 0, err
    tril = tmp_path / "kernels" / "tril.cpp"
    _replace_body(tril, "at::Tensor & tril_out(", "  return out; // mine\n")
    kept = tril.read_bytes()
    header.write_text(
        "".join(line for line in header.read_text().splitlines(keepends=True) if "aten::tril.out(" not in line)
    )
    code, _, err = _generate(tmp_path, "--declarations", "decls.h")
    assert code == 2
    assert err == (
        "error: backend.yaml:3: unknown operator 'tril.out' under 'supported': decls.h has no such operator\n"
        "  hint: did you mean 'tril'?\n"
    )
    (tmp_path / "backend.yaml").write_text("backend: PrivateUse1\ncpp_namespace: gone\nsupported: [abs.out]\n")
    code, out, err = _generate(tmp_path, "--declarations", "decls.h")
    assert code == 0, err
    assert tril.read_bytes() == kept
    assert "note: kernels/tril.cpp is excluded from the build: its ops are no longer generated" in err
    sources = (tmp_path / "generated" / "sources.cmake").read_text()
    assert '"${CMAKE_CURRENT_LIST_DIR}/../kernels/tril.cpp"' not in sources
    assert "# Excluded: ../kernels/tril.cpp" in sources
    # Still reported on later runs, until the user deletes it.
    assert "kernels/tril.cpp is excluded" in _generate(tmp_path, "--declarations", "decls.h")[2]
    tril.unlink()
    code, _, err = _generate(tmp_path, "--declarations", "decls.h")
    assert code == 0 and "excluded" not in err
    assert "Excluded" not in (tmp_path / "generated" / "sources.cmake").read_text()


RENAME_YAML = """\
backend: PrivateUse1
cpp_namespace: renamed
device: renamed
supported:
  - abs.out
  - tril.out
{extra}"""

CDIST_BODY = """\
  // Written against torch 2.13, where the first parameter is called `grad`.
  return at::zeros_like(x1) + grad.sum() * 0;
"""


def _generate_with_header(root: Path, version: str) -> tuple[int, str, str]:
    """Generate against the real header of torch `version`, always read from the same path, as
    an upgrade of the installed torch would."""
    header = root / "torch-include" / "RegistrationDeclarations.h"
    header.parent.mkdir(exist_ok=True)
    header.write_bytes(shared_header(version).read_bytes())
    return _generate(root, "--declarations", str(header))


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {name for name in set(before) | set(after) if before.get(name) != after.get(name)}


def test_upgrade_that_changes_nothing_for_the_backend_changes_only_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "backend.yaml").write_text(RENAME_YAML.format(extra=""))
    assert _generate_with_header(tmp_path, "2.13.0")[0] == 0
    before = tree(tmp_path / "generated")
    code, out, err = _generate_with_header(tmp_path, "2.14.1")
    assert code == 0, err
    assert _changed(before, tree(tmp_path / "generated")) == {"scaffold_manifest.json"}
    assert out.splitlines()[:-1] == ["  updated  generated/scaffold_manifest.json"]


def test_rename_only_upgrade_keeps_the_users_parameter_names_and_compiles(tmp_path: Path, toolchain: Toolchain) -> None:
    """torch 2.14 renamed `_cdist_backward`'s `grad` to `grad_output` without changing a type: a
    kernel body using `grad` must still compile after regeneration."""
    root = tmp_path
    (root / "backend.yaml").write_text(RENAME_YAML.format(extra="  - _cdist_backward\n"))
    code, _, err = _generate_with_header(root, "2.13.0")
    assert code == 0, err
    head = (
        "at::Tensor _cdist_backward("
        "const at::Tensor & grad, const at::Tensor & x1, const at::Tensor & x2, double p, const at::Tensor & cdist)"
    )
    kernel = root / "kernels" / "_cdist_backward.cpp"
    _replace_body(kernel, head + " {", CDIST_BODY)
    kernel.write_text(
        kernel.read_text().replace(
            "#include <c10/util/Exception.h>\n", "#include <c10/util/Exception.h>\n#include <ATen/ATen.h>\n"
        )
    )
    written = kernel.read_bytes()
    generated_before = tree(root / "generated")

    diff = run_cli_process(
        [
            "diff",
            str(shared_header("2.13.0")),
            str(shared_header("2.14.1")),
            "--yaml",
            "backend.yaml",
            "--format",
            "json",
        ],
        root,
    )
    assert diff.returncode == 0, diff.stderr
    impacts = {i["op"]: i for i in json.loads(diff.stdout)["backend"]["impacts"]}
    assert impacts["_cdist_backward"]["change"].startswith("parameters renamed only: ")
    assert "keeps its parameter names" in impacts["_cdist_backward"]["action"]

    code, out, err = _generate_with_header(root, "2.14.1")
    assert code == 0, err
    assert kernel.read_bytes() == written
    assert "note: kernels/_cdist_backward.cpp keeps your parameter names for _cdist_backward" in err
    # The declaration PyTorch's names; the user's definition keeps theirs. Only this op's files and
    # the manifest change under generated/.
    declaration = (root / "generated" / "native" / "_cdist_backward.h").read_text()
    assert "_cdist_backward(const at::Tensor & grad_output, const at::Tensor & x1" in declaration
    changed = _changed(generated_before, tree(root / "generated"))
    assert "scaffold_manifest.json" in changed and "native/_cdist_backward.h" in changed
    assert changed - {"scaffold_manifest.json", "native/_cdist_backward.h"} <= {
        f"RegisterPrivateUse1_{i}.cpp" for i in range(8)
    }
    # Stable from now on: nothing to do, no repeated note, and --check is clean.
    code, out, err = _generate_with_header(root, "2.14.1")
    assert code == 0 and "keeps your parameter names" not in err and "everything up to date" in out
    # And it compiles against the new declaration.
    compile_all(toolchain, [kernel], root / "obj", [root / "generated"])
