"""`scaffold-backend generate`: golden output, determinism, careful writing, project settings."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import Result
from scaffold_testing import GOLDEN, TESTS, CliRun, run_cli_process, tree, write

DATA = TESTS / "data"
SMALL_YAML = DATA / "small_backend.yaml"
SUBSET_HEADER = DATA / "declarations_2.13_subset.h"


def project(tmp_path: Path, name: str = "project") -> Path:
    """A backend project directory holding copies of the small inputs."""
    root = tmp_path / name
    root.mkdir()
    shutil.copy(SMALL_YAML, root / "backend.yaml")
    shutil.copy(SUBSET_HEADER, root / "RegistrationDeclarations.h")
    return root


ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated"]


def generate(cli_run: CliRun, root: Path, *extra: str) -> Result:
    return cli_run([*ARGS, *extra], root)


def test_golden_output(tmp_path: Path, cli_run: CliRun, update_golden: bool) -> None:
    root = project(tmp_path)
    result = generate(cli_run, root)
    assert result.exit_code == 0, result.output
    produced = {**{f"generated/{k}": v for k, v in tree(root / "generated").items()},
                **{f"kernels/{k}": v for k, v in tree(root / "kernels").items()}}
    golden_dir = GOLDEN / "small_backend"
    if update_golden:
        shutil.rmtree(golden_dir, ignore_errors=True)
        for relative, content in produced.items():
            (golden_dir / relative).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / relative).write_bytes(content)
    expected = tree(golden_dir)
    assert sorted(produced) == sorted(expected), "file set differs: run pytest --update-golden and review"
    for relative, content in expected.items():
        assert produced[relative].decode() == content.decode(), f"{relative} differs from its golden file"


def test_output_is_byte_identical_across_runs_and_directories(tmp_path: Path, cli_run: CliRun) -> None:
    first, second = project(tmp_path, "alpha_project"), project(tmp_path, "bravo_project_renamed")
    assert generate(cli_run, first).exit_code == 0
    assert generate(cli_run, second).exit_code == 0
    shutil.rmtree(first / "kernels")
    shutil.rmtree(first / "generated")
    assert generate(cli_run, first).exit_code == 0
    assert tree(first / "generated") == tree(second / "generated")
    assert tree(first / "kernels") == tree(second / "kernels")
    text = b"".join(tree(first / "generated").values()).decode()
    assert str(tmp_path) not in text
    assert "alpha_project" not in text and "bravo_project" not in text


def test_noop_regeneration_touches_nothing(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    assert generate(cli_run, root).exit_code == 0
    files = [p for p in root.rglob("*") if p.is_file()]
    past = 1_000_000_000
    for path in files:
        os.utime(path, (past, past))
    result = generate(cli_run, root)
    assert result.exit_code == 0
    assert result.output.strip().endswith("everything up to date")
    assert all(path.stat().st_mtime == past for path in files)
    assert generate(cli_run, root, "--check").exit_code == 0


def test_check_and_dry_run_write_nothing_and_report(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    dry = generate(cli_run, root, "--dry-run")
    assert dry.exit_code == 0 and "   create  generated/sources.cmake" in dry.output
    assert not (root / "generated").exists() and not (root / "kernels").exists()
    process = run_cli_process([*ARGS, "--check"], root)
    assert process.returncode == 1
    assert "error: 36 file(s) are stale against RegistrationDeclarations.h and backend.yaml" in process.stderr
    assert "Traceback" not in process.stderr
    assert not (root / "generated").exists()

    assert generate(cli_run, root).exit_code == 0
    (root / "backend.yaml").write_text(SMALL_YAML.read_text().replace("  - abs\n", "  - abs\n  - neg\n"))
    check = run_cli_process([*ARGS, "--check"], root)
    assert check.returncode == 1
    assert check.stdout.splitlines()[:3] == [
        "   create  kernels/neg.cpp",
        "   update  generated/PrivateUse1NativeFunctions.h",
        "   create  generated/native/neg.h",
    ]


def test_adding_an_op_creates_one_stub_and_keeps_the_others(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    assert generate(cli_run, root).exit_code == 0
    edited = root / "kernels" / "abs.cpp"
    edited.write_text(
        edited.read_text().replace(
            'TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::abs has',
            '// mine\n  TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: aten::abs has',
        )
    )
    before_kernels = tree(root / "kernels")
    before_generated = tree(root / "generated")
    (root / "backend.yaml").write_text(SMALL_YAML.read_text().replace("  - abs\n", "  - abs\n  - mm\n"))
    assert generate(cli_run, root).exit_code == 0
    after_kernels = tree(root / "kernels")
    assert set(after_kernels) - set(before_kernels) == {"mm.cpp"}
    assert {name: after_kernels[name] for name in before_kernels} == before_kernels
    changed = {name for name, content in tree(root / "generated").items() if before_generated.get(name) != content}
    # The new group's header, the umbrella header, one shard, the build list and the manifest.
    assert changed == {"native/mm.h", "PrivateUse1NativeFunctions.h", "RegisterPrivateUse1_1.cpp",
                       "sources.cmake", "scaffold_manifest.json"}


def test_the_runtimes_own_device_guard_replaces_c10s(tmp_path: Path, cli_run: CliRun) -> None:
    """`device_guard: {type, header}`: every wrapper that had c10's guard declares the runtime's
    type instead, on the same device, and each file using it includes its header."""
    root = project(tmp_path)
    assert generate(cli_run, root).exit_code == 0
    plain = tree(root / "generated")
    yaml_text = SMALL_YAML.read_text()
    assert "device_guard: true\n" in yaml_text
    (root / "backend.yaml").write_text(
        yaml_text.replace("device_guard: true\n", "device_guard:\n  type: tiny::Guard\n  header: '\"tiny_guard.h\"'\n")
    )
    assert generate(cli_run, root).exit_code == 0
    own = tree(root / "generated")
    shards = [name for name in plain if name.startswith("RegisterPrivateUse1_")]
    assert shards
    for name in shards:
        before, after = plain[name].decode(), own[name].decode()
        guards = (
            before.count("const c10::OptionalDeviceGuard device_guard(")
            + before.count("const c10::DeviceGuard device_guard(")
        )
        assert guards > 0
        assert after.count("const tiny::Guard device_guard(") == guards
        assert "c10::OptionalDeviceGuard" not in after and "const c10::DeviceGuard" not in after
        guard = re.compile(r"const (c10::OptionalDeviceGuard|c10::DeviceGuard|tiny::Guard) device_guard\(")
        assert guard.sub("GUARD(", after.replace('#include "tiny_guard.h"\n', "")) == guard.sub("GUARD(", before)
        assert '#include "tiny_guard.h"\n' in after


def test_hand_edited_generated_file_is_not_overwritten(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    assert generate(cli_run, root).exit_code == 0
    fallback = root / "generated" / "PrivateUse1Fallback.cpp"
    fallback.write_text(fallback.read_text() + "// my tweak\n")
    (root / "backend.yaml").write_text(
        SMALL_YAML.read_text().replace("explicit: [neg.out]", "explicit: [neg.out, neg]")
    )
    process = run_cli_process(ARGS, root)
    assert process.returncode == 2
    assert process.stderr == (
        "error: generated/PrivateUse1Fallback.cpp: this generated file was edited by hand since the last "
        "generation; refusing to overwrite the edits\n"
        "  hint: move the change into a kernel file (generated files are rewritten on every run), or pass "
        "--force to discard it\n"
    )
    assert fallback.read_text().endswith("// my tweak\n")
    assert "neg.h" not in os.listdir(root / "generated" / "native")  # nothing half-written
    assert generate(cli_run, root, "--force").exit_code == 0
    assert "// my tweak" not in fallback.read_text()


def test_foreign_files_are_not_overwritten(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    write(root / "generated" / "sources.cmake", "# my own build list\n")
    process = run_cli_process(ARGS, root)
    assert process.returncode == 2
    assert process.stderr.startswith(
        "error: generated/sources.cmake: exists and was not written by scaffold-backend; refusing to overwrite it"
    )
    assert sorted(os.listdir(root / "generated")) == ["sources.cmake"]
    assert not (root / "kernels").exists()


def test_files_no_longer_produced_are_deleted_but_stubs_are_kept(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    assert generate(cli_run, root).exit_code == 0
    (root / "backend.yaml").write_text(SMALL_YAML.read_text().replace("  - tril.out\n", ""))
    result = generate(cli_run, root)
    assert result.exit_code == 0
    assert "  deleted  generated/native/tril.h" in result.output
    assert (root / "kernels" / "tril.cpp").exists()
    assert "note: kernels/tril.cpp is excluded from the build" in result.output
    sources = (root / "generated" / "sources.cmake").read_text()
    assert "tril.cpp" not in sources.split("Excluded")[0]
    assert "# Excluded: ../kernels/tril.cpp" in sources


def test_plain_generate_uses_pyproject_settings(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    write(
        root / "pyproject.toml",
        '[tool.scaffold-backend]\nyaml = "backend.yaml"\nout = "gen"\nkernels = "src/kernels"\n'
        'declarations = "RegistrationDeclarations.h"\n',
    )
    (root / "sub").mkdir()
    result = cli_run(["generate"], root / "sub")
    assert result.exit_code == 0, result.output
    assert (root / "gen" / "sources.cmake").exists() and (root / "src" / "kernels" / "abs.cpp").exists()
    assert "//   backend.yaml\n" in (root / "gen" / "PrivateUse1Fallback.cpp").read_text()


def _kept_settings(pyproject: Path) -> Path:
    """Where the settings parsed from this pyproject.toml's bytes are kept (project.py)."""
    digest = hashlib.sha256(pyproject.read_bytes()).hexdigest()[:32]
    return Path(os.environ["XDG_CACHE_HOME"]) / "scaffold-backend" / "settings" / f"{digest}.json"


def test_settings_are_kept_per_content_and_never_trusted_blindly(tmp_path: Path) -> None:
    """The settings table is kept in the user cache by the pyproject's digest, so the up-to-date
    answer needs no TOML parser; an edit is a new digest, a damaged or foreign entry a miss, an
    error is reported every time, and a cache directory others may write is not read."""
    root = project(tmp_path)
    pyproject = write(root / "pyproject.toml", '[tool.scaffold-backend]\nyaml = "backend.yaml"\nout = "gen"\n'
                      'declarations = "RegistrationDeclarations.h"\n')
    assert run_cli_process(["generate"], root).returncode == 0
    kept = _kept_settings(pyproject)
    assert json.loads(kept.read_text())["table"] == {
        "yaml": "backend.yaml", "out": "gen", "declarations": "RegistrationDeclarations.h"}
    pyproject.write_text(pyproject.read_text().replace('out = "gen"', 'out = "gen2"'))
    assert run_cli_process(["generate"], root).returncode == 0
    assert (root / "gen2" / "sources.cmake").exists()  # the edit is seen at once
    kept = _kept_settings(pyproject)
    for damaged in ("{", '{"format": 1, "table": {"out": 3}}', '{"format": 1, "table": {"nope": "x"}}'):
        kept.write_text(damaged)
        process = run_cli_process(["generate", "--check"], root)
        assert process.returncode == 0, process.stderr  # a miss: parsed again
        assert json.loads(kept.read_text())["table"]["out"] == "gen2"
    kept.write_text('{"format": 1, "table": {"yaml": "backend.yaml", "out": "elsewhere"}}')
    kept.parent.chmod(0o777)
    try:
        process = run_cli_process(["generate", "--check"], root)
        assert process.returncode == 0, process.stderr  # not read: others could have written it
        assert not (root / "elsewhere").exists()
    finally:
        kept.parent.chmod(0o755)
    pyproject.write_text("[tool.scaffold-backend\n")
    for _ in range(2):
        process = run_cli_process(["generate"], root)
        assert process.returncode == 2 and process.stderr.startswith("error: ")
        assert "pyproject.toml" in process.stderr and "invalid TOML" in process.stderr
    pyproject.write_bytes(b'[tool.scaffold-backend]\nyaml = "\xff"\n')
    process = run_cli_process(["generate"], root)
    assert process.returncode == 2 and "not UTF-8" in process.stderr and "Traceback" not in process.stderr


def test_generate_without_settings_or_options_is_an_error(tmp_path: Path) -> None:
    process = run_cli_process(["generate"], tmp_path)
    assert process.returncode == 2
    assert process.stderr.startswith(
        "error: --yaml and --out: not given, and no pyproject.toml with [tool.scaffold-backend]"
    )


def test_bad_inputs_exit_2_without_traceback_and_write_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "backend.yaml").write_text(SMALL_YAML.read_text().replace("  - abs\n", "  - absolutely\n"))
    process = run_cli_process(ARGS, root)
    assert process.returncode == 2
    assert process.stderr == (
        "error: backend.yaml:10: unknown operator 'absolutely' under 'supported': "
        "RegistrationDeclarations.h has no such operator\n"
        "  hint: run `scaffold-backend ops --all` to list the operators of this torch\n"
    )
    assert "Traceback" not in process.stderr
    assert not (root / "generated").exists() and not (root / "kernels").exists()
    (root / "RegistrationDeclarations.h").write_text("at::Tensor broken(\n")
    process = run_cli_process(ARGS, root)
    assert process.returncode == 2
    assert process.stderr.startswith("error: RegistrationDeclarations.h:1: malformed declaration")
    missing = run_cli_process(["generate", "--yaml", "nope.yaml", "--out", "g"], root)
    assert missing.returncode == 2 and missing.stderr == "error: nope.yaml: backend YAML not found\n"


def test_ops_listing(tmp_path: Path, cli_run: CliRun) -> None:
    root = project(tmp_path)
    table = cli_run(["ops", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h"], root)
    assert table.exit_code == 0
    lines = table.output.splitlines()
    assert lines[0].split() == ["OP", "STATUS", "KERNEL", "FILE", "NOTES"]
    rows_by_op = {line.split()[0]: line.split(None, 3)[1:] for line in lines[1:-2]}
    assert rows_by_op["abs"] == ["native", "abs.cpp", "override of a default kernel"]
    assert rows_by_op["view"] == ["native", "view.cpp", "symint"]
    assert rows_by_op["neg.out"] == ["explicit-fallback", "-", "-"]
    assert "add_.Tensor" not in rows_by_op  # composite ops only with --all
    assert lines[-1] == (
        "29 ops in RegistrationDeclarations.h, 15 required; 11 native, 1 autograd, 1 explicit-fallback, "
        "7 boxed-fallback, 9 composite. Backend YAML: backend.yaml; fallback default: cpu."
    )
    import json
    rows = json.loads(cli_run(["ops", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h",
                               "--json", "--status", "boxed-fallback"], root).output)
    assert [row["op"] for row in rows] == ["_local_scalar_dense", "add.out", "bitwise_and.Tensor_out",
                                           "empty_strided", "mm.out", "set_.source_Storage", "unique_dim"]
    assert rows[4]["notes"] == ["never falls back"] and rows[4]["required"] is True


def test_the_same_path_is_never_written_twice(tmp_path: Path) -> None:
    from scaffold_backend.errors import OutputError
    from scaffold_backend.model.outputs import OutputFile, Owner
    from scaffold_backend.write.plan import check_unique_paths

    twice = [OutputFile(tmp_path / "a.cpp", "x", Owner.GENERATOR), OutputFile(tmp_path / "a.cpp", "y", Owner.USER)]
    with pytest.raises(OutputError, match="two outputs would be written to the same file"):
        check_unique_paths(twice)


def test_reference_backend_generated_sources_are_current() -> None:
    """generated/ is checked in; it must be exactly what the generator produces now."""
    from scaffold_testing import REPO

    process = run_cli_process(["generate", "--check"], REPO)
    assert process.returncode == 0, process.stdout + process.stderr
    # The count is the YAML's, which grows with foo's kernels; the words are the answer's.
    assert re.fullmatch(r"\d+ kernel\(s\), everything up to date", process.stdout.strip()), process.stdout
