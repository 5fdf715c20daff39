"""`generate` against hostile input and faults: every bad input gets exit 2 and one
located line, no traceback, and the whole tree (the victim files beside it included) byte-for-byte
unchanged; the manifest and the transaction journal cannot take the tool outside its directories;
writes are one transaction under a lock."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scaffold_testing import TESTS, run_cli_process, tree, write

from scaffold_backend.commands.cli import cli
from scaffold_backend.errors import OutputError
from scaffold_backend.model.outputs import JOURNAL_NAME, Layout
from scaffold_backend.parse.installed_torch import find_installed_torch
from scaffold_backend.write.lock import output_lock

DATA = TESTS / "data"
SMALL_YAML = (DATA / "small_backend.yaml").read_text()
SUBSET_HEADER = (DATA / "declarations_2.13_subset.h").read_text()
ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated"]
MANIFEST = "generated/scaffold_manifest.json"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated small project, copied by each test that needs one."""
    root = tmp_path_factory.mktemp("baseline") / "project"
    write(root / "backend.yaml", SMALL_YAML)
    write(root / "RegistrationDeclarations.h", SUBSET_HEADER)
    code, stdout, stderr = invoke(root, ARGS)
    assert code == 0, stdout + stderr
    return root


def workspace(tmp_path: Path, baseline: Path | None) -> Path:
    """tmp_path/project (generated when `baseline`, else only the inputs) and tmp_path/victim."""
    root = tmp_path / "project"
    if baseline is not None:
        shutil.copytree(baseline, root, symlinks=True)
    else:
        write(root / "backend.yaml", SMALL_YAML)
        write(root / "RegistrationDeclarations.h", SUBSET_HEADER)
    write(tmp_path / "victim" / "victim.txt", "precious\n")
    return root


def invoke(root: Path, args: list[str]) -> tuple[int, str, str]:
    """The CLI in-process; an exception other than a reported error fails the test."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.exit_code, result.stdout, result.stderr


def snapshot(directory: Path) -> dict[str, bytes | str]:
    """Files with their bytes and symlinks with their targets, everything below `directory`."""
    entries: dict[str, bytes | str] = {}
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).as_posix()
        if path.is_symlink():
            entries[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            entries[relative] = path.read_bytes()
    return entries


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def edit_manifest(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = root / MANIFEST
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2) + "\n")


def add_file_entry(relative: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        edit_manifest(root, lambda d: d["files"].__setitem__(relative, sha256("precious\n")))
    return setup


def add_kernel_entry(relative: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        edit_manifest(root, lambda d: d["kernel_files"].__setitem__(relative, {"heads": {}, "base": "precious\n"}))
    return setup


def yaml_edit(old: str, new: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        text = (root / "backend.yaml").read_text()
        assert old in text
        (root / "backend.yaml").write_text(text.replace(old, new, 1))
    return setup


def header_edit(old: str, new: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        text = (root / "RegistrationDeclarations.h").read_text()
        assert old in text
        (root / "RegistrationDeclarations.h").write_text(text.replace(old, new, 1))
    return setup


def symlink_native_outside(root: Path) -> None:
    shutil.rmtree(root / "generated" / "native")
    (root / "generated" / "native").symlink_to(root.parent / "victim")


def symlink_native_outside_without_manifest(root: Path) -> None:
    symlink_native_outside(root)
    (root / MANIFEST).unlink()


def escape_through_a_symlinked_directory(root: Path) -> None:
    add_file_entry("escape/victim.txt")(root)
    (root / "generated" / "escape").symlink_to(root.parent / "victim")


def manifest_symlinked_to_an_endless_file(root: Path) -> None:
    (root / MANIFEST).unlink()
    (root / MANIFEST).symlink_to("/dev/zero")


def symlink_kernel_outside(root: Path) -> None:
    (root / "kernels" / "abs.cpp").unlink()
    (root / "kernels" / "abs.cpp").symlink_to(root.parent / "victim" / "victim.txt")


def crafted_journal(root: Path) -> None:
    write(root.parent / "victim" / ".victim.txt.abcd1234", "overwritten\n")
    journal = {"format": 1, "operations": [{"target": "../../victim/victim.txt", "staged": ".victim.txt.abcd1234"}]}
    write(root / "generated" / JOURNAL_NAME, json.dumps(journal))


def deep_yaml(root: Path) -> None:
    nested = "[" * 5000 + "]" * 5000
    (root / "backend.yaml").write_text("backend: PrivateUse1\ncpp_namespace: a\nsupported: " + nested + "\n")


def output_below_file(root: Path) -> None:
    write(root / "afile", "not a directory\n")


def not_utf8_header(root: Path) -> None:
    data = (root / "RegistrationDeclarations.h").read_bytes().split(b"\n")
    data[2] = data[2] + b" // \xff"
    (root / "RegistrationDeclarations.h").write_bytes(b"\n".join(data))


def no_setup(root: Path) -> None:
    pass


GENERATED = True
FRESH = False
# (id, start from a generated tree?, setup, extra arguments, the one line expected on stderr)
CORPUS = [
    # 1. The manifest is an input: schema, version, paths confined (with and without --force).
    ("manifest-parent-path", GENERATED, add_file_entry("../../victim/victim.txt"), [],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\" entry '../../victim/victim.txt' is "
     "not inside the output directory"),
    ("manifest-parent-path-force", GENERATED, add_file_entry("../../victim/victim.txt"), ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\" entry '../../victim/victim.txt' is "
     "not inside the output directory"),
    ("manifest-absolute-path", GENERATED,
     lambda root: add_file_entry(str(root.parent / "victim" / "victim.txt"))(root), ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\": '"),
    ("manifest-dotdot-inside", GENERATED, add_file_entry("native/../../../victim/victim.txt"), [],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\": "
     "'native/../../../victim/victim.txt' is not a plain relative path"),
    ("manifest-kernel-outside", GENERATED, add_kernel_entry("../../victim/victim.txt"), ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"kernel_files\" entry "
     "'../../victim/victim.txt' is not inside the kernel directory"),
    ("manifest-symlink-escape", GENERATED,
     escape_through_a_symlinked_directory, ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\" entry 'escape/victim.txt' is not "
     "inside the output directory"),
    ("manifest-format", GENERATED, lambda root: edit_manifest(root, lambda d: d.__setitem__("format", 99)), [],
     "error: generated/scaffold_manifest.json: the manifest is not valid: format 99 is not 1"),
    ("manifest-bad-digest", GENERATED,
     lambda root: edit_manifest(root, lambda d: d["files"].__setitem__("sources.cmake", 7)), [],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\" entry 'sources.cmake' must be a "
     "sha256 digest"),
    ("manifest-not-json", GENERATED, lambda root: (root / MANIFEST).write_text("{\n  nope\n"), [],
     "error: generated/scaffold_manifest.json:2: the manifest is not valid: invalid JSON"),
    ("manifest-not-utf8", GENERATED,
     lambda root: (root / MANIFEST).write_bytes((root / MANIFEST).read_bytes().replace(b'"files"', b'"fi\xffles"')), [],
     "error: generated/scaffold_manifest.json:…: the manifest is not valid: it is not UTF-8 text"),
    ("manifest-symlink-to-endless", GENERATED,
     manifest_symlinked_to_an_endless_file, [],
     "error: generated/scaffold_manifest.json: the manifest lies outside the output and kernel directories"),
    ("journal-outside", GENERATED, crafted_journal, [],
     "error: ../victim/victim.txt: a file named by the transaction journal lies outside the output and kernel "
     "directories"),
    # 4. Tracebacks turned into one located line.
    ("yaml-hex-int", FRESH, yaml_edit("shards: 2", "shards: 0x10"), [],
     "error: backend.yaml:7: 'shards' must be a decimal integer"),
    ("yaml-sexagesimal-int", FRESH, yaml_edit("shards: 2", "shards: 1:30"), [],
     "error: backend.yaml:7: 'shards' must be a decimal integer"),
    ("yaml-control-char", FRESH, yaml_edit("cpp_namespace: tiny", "cpp_namespace: ti\x01ny"), [],
     "error: backend.yaml:4: invalid YAML: the character U+0001 is not allowed"),
    ("yaml-deep-nesting", FRESH, deep_yaml, [], "error: backend.yaml: invalid YAML: nested too deeply"),
    ("out-below-file", FRESH, output_below_file, ["--out", "afile/generated"],
     "error: afile/generated: --out cannot be created: afile is a file, not a directory"),
    ("declaration-flag-not-string", FRESH,
     header_edit('"dispatch": "True", "default": "False"}', '"dispatch": true, "default": "False"}'), [],
     "error: RegistrationDeclarations.h:6: malformed declaration metadata: \"dispatch\" must be \"True\" or \"False\", "
     "got true"),
    ("declaration-flag-list", FRESH,
     header_edit('"dispatch": "True", "default": "False"}', '"dispatch": ["True"], "default": "False"}'), [],
     "error: RegistrationDeclarations.h:6: malformed declaration metadata: \"dispatch\" must be \"True\" or \"False\", "
     "got [\"True\"]"),
    ("schema-torchgen-rejects", FRESH,
     header_edit("aten::abs.out(Tensor self, *, Tensor(a!) out)", "aten::abs.out(Tensor self, *, Wibble(a!) out)"), [],
     "error: backend.yaml:9: the schema of 'abs.out' cannot be parsed by the installed torchgen: unrecognized type "
     "Wibble(a!)"),
    ("schema-duplicate-argument", FRESH,
     header_edit("aten::abs.out(Tensor self, *, Tensor(a!) out)", "aten::abs.out(Tensor self, *, Tensor(a!) self)"),
     [],
     "error: backend.yaml:9: the schema of 'abs.out' cannot be parsed by the installed torchgen: the argument name "
     "'self' appears twice"),
    ("declarations-endless", FRESH, no_setup, ["--declarations", "/dev/zero"],
     "error: …/dev/zero: declarations file is larger than 64 MiB; not a real input"),
    ("declarations-not-utf8", FRESH, not_utf8_header, [],
     "error: RegistrationDeclarations.h:3: declarations file is not UTF-8 text (byte 0xff)"),
    # 6. Dangerous input.
    *[(f"backend-{key}", FRESH, yaml_edit("backend: PrivateUse1", f"backend: {key}"), [],
       f"error: backend.yaml:3: 'backend' {key} is a dispatch key PyTorch implements itself")
      for key in ("CUDA", "CPU", "Undefined", "AutocastCPU")],
    ("device-torch-module", FRESH, yaml_edit("device: tiny", "device: nn"), [],
     "error: backend.yaml:5: device name 'nn' is already used by PyTorch (torch.nn exists)"),
    ("out-root", FRESH, no_setup, ["--out", "/"], "error: /: --out is the filesystem root"),
    # A symlink leading out is found through the manifest's entries below it, or the output itself.
    ("native-symlinked-outside", GENERATED, symlink_native_outside, ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"files\" entry 'native/…' is not inside the "
     "output directory"),
    ("kernel-symlinked-outside", GENERATED, symlink_kernel_outside, ["--force"],
     "error: generated/scaffold_manifest.json: the manifest is not valid: \"kernel_files\" entry '../kernels/abs.cpp' "
     "is not inside the kernel directory"),
    ("native-symlinked-outside-no-manifest", GENERATED,
     symlink_native_outside_without_manifest, ["--force"],
     "error: generated/native/…: an output file lies outside the output and kernel directories"),
]


@pytest.mark.parametrize(
    ("setup", "from_generated", "extra", "expected"),
    [pytest.param(setup, gen, extra, expected, id=name) for name, gen, setup, extra, expected in CORPUS],
)
def test_bad_input_is_refused_with_one_located_line_and_nothing_changes(
    tmp_path: Path,
    baseline: Path,
    setup: Callable[[Path], object],
    from_generated: bool,
    extra: list[str],
    expected: str,
) -> None:
    root = workspace(tmp_path, baseline if from_generated else None)
    setup(root)
    before = snapshot(tmp_path)
    code, _, stderr = invoke(root, [*ARGS, *extra])
    assert code == 2, stderr
    head, _, tail = expected.partition("…")
    assert stderr.startswith(head) and tail in stderr.splitlines()[0], stderr
    assert "Traceback" not in stderr
    assert len([line for line in stderr.splitlines() if not line.startswith("  hint: ")]) == 1, stderr
    assert snapshot(tmp_path) == before


def test_out_inside_the_torch_installation_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path, None)
    inside = find_installed_torch().package_dir / "scaffold_backend_test_out"
    code, _, stderr = invoke(root, [*ARGS[:-1], str(inside)])
    assert code == 2 and "--out is inside (or contains) the torch installation" in stderr
    assert not inside.exists()


def test_usage_errors_are_one_line_naming_the_file(tmp_path: Path) -> None:
    root = workspace(tmp_path, None)
    process = run_cli_process(["generate", "--yaml", ".", "--out", "generated"], root)
    assert (process.returncode, process.stderr) == (2, "error: .: --yaml takes a file; this is a directory\n")
    process = run_cli_process([*ARGS[:-1], ""], root)
    assert (process.returncode, process.stderr) == (2, "error: --out: an empty path is not a path\n")
    assert snapshot(root) == snapshot(root) and not (root / "generated").exists()


# 2. Without a manifest, a generated file that differs from what would be written is the user's.
def test_hand_edit_survives_a_lost_manifest(tmp_path: Path, baseline: Path) -> None:
    root = workspace(tmp_path, baseline)
    header = root / "generated" / "native" / "abs.h"
    header.write_text(header.read_text() + "// my edit\n")
    (root / MANIFEST).unlink()
    before = snapshot(tmp_path)
    code, _, stderr = invoke(root, ARGS)
    assert code == 2
    assert stderr.startswith("error: generated/native/abs.h: differs from what would be generated and no manifest "
                             "records it, so it may hold edits; refusing to overwrite it")
    assert snapshot(tmp_path) == before
    assert invoke(root, [*ARGS, "--force"])[0] == 0
    assert "// my edit" not in header.read_text()


# 3. A kernel the YAML names is never missing from its file.
def test_kernels_return_to_a_file_that_was_orphaned(tmp_path: Path) -> None:
    root = workspace(tmp_path, None)
    assert invoke(root, ARGS)[0] == 0
    abs_cpp = root / "kernels" / "abs.cpp"
    assert "abs_out(" in abs_cpp.read_text() and "Tensor abs(" in abs_cpp.read_text()
    yaml_edit("  - abs.out\n  - abs\n", "")(root)
    assert invoke(root, ARGS)[0] == 0
    abs_cpp.write_text(abs_cpp.read_text().replace("// ", "// edited: ", 1))
    yaml_edit("supported:\n", "supported:\n  - abs.out\n  - abs\n")(root)
    assert invoke(root, [*ARGS, "--check"])[0] == 1
    code, stdout, _ = invoke(root, ARGS)
    assert code == 0, stdout
    text = abs_cpp.read_text()
    assert "// edited: " in text and "Tensor abs(" in text and "abs_out(" in text
    assert invoke(root, [*ARGS, "--check"])[0] == 0


def test_a_kernel_deleted_from_its_file_is_added_back(tmp_path: Path, baseline: Path) -> None:
    root = workspace(tmp_path, baseline)
    abs_cpp = root / "kernels" / "abs.cpp"
    pristine = abs_cpp.read_text()
    lines = pristine.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("at::Tensor abs("))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    abs_cpp.write_text("".join(lines[:start] + lines[end + 2 :]))
    assert invoke(root, [*ARGS, "--check"])[0] == 1
    assert invoke(root, ARGS)[0] == 0
    assert "at::Tensor abs(" in abs_cpp.read_text()
    assert invoke(root, [*ARGS, "--check"])[0] == 0


def test_a_signature_left_in_a_comment_or_string_does_not_hide_a_missing_kernel(
    tmp_path: Path, baseline: Path
) -> None:
    """The user replaced the abs kernel by a commented-out copy and a (raw) string quoting it: no
    definition is left, so the run adds a fresh stub (and --check said so before). The raw string
    has a delimiter: the kernel's text holds `)"`, which ends a plain R"(...)" early."""
    root = workspace(tmp_path, baseline)
    abs_cpp = root / "kernels" / "abs.cpp"
    text = abs_cpp.read_text()
    start = text.index("at::Tensor abs(")
    end = text.index("}\n", start) + 2
    kernel = text[start:end]
    abs_cpp.write_text(text[:start] + "/* moved to abs_impl.cpp:\n" + kernel + "*/\n"
                       + f'const char* kOld = R"old({kernel})old";\n' + text[end:])
    code, _, stderr = invoke(root, [*ARGS, "--check"])
    assert code == 1 and "1 file(s) are stale" in stderr, stderr
    assert invoke(root, ARGS)[0] == 0
    merged = abs_cpp.read_text()
    assert merged.count(kernel) == 3 and "/* moved to abs_impl.cpp:" in merged
    assert invoke(root, [*ARGS, "--check"])[0] == 0


def test_a_reformatted_signature_is_not_reported_missing(tmp_path: Path, baseline: Path) -> None:
    """clang-format broke the definition lines, renamed parameters, moved the return type: every
    kernel is still there, and nothing is added."""
    root = workspace(tmp_path, baseline)
    abs_cpp = root / "kernels" / "abs.cpp"
    text = abs_cpp.read_text()
    reformatted = (text.replace("at::Tensor abs(const at::Tensor & self) {",
                                "at::Tensor\nabs(const at::Tensor& input)\n{")
                   .replace("at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out) {",
                            "at::Tensor&\nabs_out(\n    const at::Tensor& self,\n    at::Tensor& out) {"))
    assert reformatted.count("\n") == text.count("\n") + 5
    abs_cpp.write_text(reformatted)
    assert invoke(root, [*ARGS, "--check"])[0] == 0
    assert invoke(root, ARGS)[0] == 0
    assert abs_cpp.read_text() == reformatted


# 7. A user's file keeps its form.
def test_merge_keeps_crlf_bom_and_bytes_that_are_not_utf8(tmp_path: Path, baseline: Path) -> None:
    root = workspace(tmp_path, baseline)
    abs_cpp = root / "kernels" / "abs.cpp"
    crlf_latin1 = abs_cpp.read_bytes().replace(b"\n", b"\r\n").replace(b"// ", b"// caf\xe9 ", 1)
    abs_cpp.write_bytes(b"\xef\xbb\xbf" + crlf_latin1)
    tril = root / "kernels" / "tril.cpp"
    tril.write_bytes(tril.read_bytes() + b"// \xff latin-1 and needing no change\n")
    untouched = tril.read_bytes()
    # abs_ joins the abs group: the file must be merged.
    yaml_edit("  - abs\n", "  - abs\n  - abs_\n")(root)
    code, stdout, stderr = invoke(root, ARGS)
    assert code == 0, stdout + stderr
    merged = abs_cpp.read_bytes()
    assert merged.startswith(b"\xef\xbb\xbf") and b"caf\xe9" in merged
    assert b"abs_(" in merged
    assert merged.count(b"\n") == merged.count(b"\r\n")
    assert tril.read_bytes() == untouched
    assert invoke(root, [*ARGS, "--check"])[0] == 0


def test_declarations_with_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    root = workspace(tmp_path, None)
    (root / "RegistrationDeclarations.h").write_text("\ufeff" + SUBSET_HEADER)
    code, _, stderr = invoke(root, ARGS)
    assert code == 0, stderr


# 5. Transactions, temporary files, the lock.
def test_stale_temporary_files_of_a_killed_run_are_removed(tmp_path: Path, baseline: Path) -> None:
    root = workspace(tmp_path, baseline)
    stale = [root / "generated" / "native" / ".abs.h.k3x9_a0b", root / "generated" / ".sources.cmake.zzzzzzzz",
             root / "kernels" / ".abs.cpp.q1w2e3r4"]
    for path in stale:
        write(path, "half a file")
    mine = [
        root / "generated" / ".abs.h.notours!",
        root / "kernels" / ".notes.txt.abcdefgh",
        root / "kernels" / ".abs.cpp.toolong99",
    ]
    for path in mine:
        write(path, "the user's")
    assert invoke(root, ARGS)[0] == 0
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in mine)


def test_an_interrupted_commit_is_completed_by_the_next_run(tmp_path: Path, baseline: Path) -> None:
    """The state a kill -9 between the journal and the last rename leaves (the slow test below
    produces it for real): the next run finishes the renames, then plans against the new tree."""
    root = workspace(tmp_path, baseline)
    new_root = workspace(tmp_path / "new", baseline)
    yaml_edit("  - abs\n", "  - abs\n  - mm\n")(new_root)
    assert invoke(new_root, ARGS)[0] == 0
    old, new = tree(root / "generated"), tree(new_root / "generated")
    operations: list[tuple[str, str | None]] = []  # (target, staged file name or None: a removal)
    for relative in sorted(set(old) | set(new)):
        target = root / "generated" / relative
        if relative not in new:
            operations.append((relative, None))
        elif old.get(relative) != new[relative]:
            staged = target.parent / f".{target.name}.abcd1234"
            write(staged, "")
            staged.write_bytes(new[relative])
            operations.append((relative, staged.name))
    # Half of the renames happened before the kill.
    for relative, staged_name in operations[: len(operations) // 2]:
        if staged_name:
            staged = root / "generated" / Path(relative).parent / staged_name
            os.replace(staged, root / "generated" / relative)
    journal = [{"target": relative, "staged": staged_name} for relative, staged_name in operations]
    write(root / "generated" / JOURNAL_NAME, json.dumps({"format": 1, "operations": journal}))
    yaml_edit("  - abs\n", "  - abs\n  - mm\n")(root)
    check = invoke(root, [*ARGS, "--check"])
    assert check[0] == 1 and "an interrupted `scaffold-backend generate` left its write unfinished" in check[2]
    code, _, stderr = invoke(root, ARGS)
    assert code == 0, stderr
    assert tree(root / "generated") == new
    assert invoke(root, [*ARGS, "--check"])[0] == 0


def test_a_second_run_cannot_take_the_lock(tmp_path: Path) -> None:
    root = workspace(tmp_path, None)
    layout = Layout(root=root, out_dir=root / "generated", kernels_dir=root / "kernels")
    with (
        output_lock(layout),
        pytest.raises(OutputError, match="another scaffold-backend run holds the lock"),
        output_lock(layout, wait_seconds=0.2),
    ):
        pass
    with output_lock(layout, wait_seconds=0.2):
        pass


def test_the_lock_is_the_outputs_own(tmp_path: Path) -> None:
    """Outputs beside each other (existing or not yet) lock independently; the kernel directory a
    run writes is locked with its output; an output created for the lock and left empty is
    removed again; a read-only run creates nothing."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "existing" / "generated").mkdir(parents=True)

    def layout(out: str, kernels: str) -> Layout:
        return Layout(root=root, out_dir=root / out, kernels_dir=root / kernels)

    with output_lock(layout("existing/generated", "existing/kernels")):
        with output_lock(layout("new/generated", "new/kernels"), wait_seconds=0):
            with output_lock(layout("existing_too", "other_kernels"), wait_seconds=0):
                assert (root / "new" / "generated").is_dir() and (root / "new" / "kernels").is_dir()
            with (
                pytest.raises(OutputError, match="another scaffold-backend run holds the lock"),
                output_lock(layout("new/generated", "elsewhere"), wait_seconds=0.1),
            ):
                pass
        with (
            pytest.raises(OutputError, match="another scaffold-backend run holds the lock") as raised,
            output_lock(layout("third", "existing/kernels"), wait_seconds=0.1),
        ):
            pass
        assert raised.value.location is not None and raised.value.location.path == "existing/kernels"
    assert sorted(path.relative_to(root).as_posix() for path in root.rglob("*")) == [
        "existing", "existing/generated"]
    # A run that only reads holds the lock on the output that a writing run would create.
    with (
        output_lock(layout("read/generated", "read/kernels"), create=False),
        pytest.raises(OutputError, match="another scaffold-backend run holds the lock"),
        output_lock(layout("read/generated", "read/kernels"), wait_seconds=0),
    ):
        pass
    assert not (root / "read").exists()


def test_a_waiter_on_an_output_removed_by_its_creator_starts_over(tmp_path: Path) -> None:
    """Run 1 creates the output for its lock and fails (leaving it empty: it is removed); run 2,
    which opened the directory meanwhile, must not go on holding a lock on a removed directory."""
    import threading

    root = tmp_path / "project"
    root.mkdir()
    layout = Layout(root=root, out_dir=root / "generated", kernels_dir=root / "generated" / "kernels")
    entered = threading.Event()
    outcome: list[bool] = []

    def second() -> None:
        entered.wait()
        with output_lock(layout, wait_seconds=5):
            outcome.append((root / "generated").is_dir())
            # the lock is on the directory that is there now: a third run cannot take it
            try:
                with output_lock(layout, wait_seconds=0):
                    outcome.append(False)
            except OutputError:
                outcome.append(True)

    thread = threading.Thread(target=second)
    thread.start()
    with output_lock(layout):
        entered.set()
        time.sleep(0.3)  # the second run is waiting on the directory now
    thread.join(10)
    assert outcome == [True, True]
    assert not (root / "generated").exists()


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    """A real write failure in the middle of staging (a file name the filesystem refuses): what
    was staged before it is removed, directories made for it too, and no file changes."""
    from scaffold_backend.write.plan import Action, Change, Plan
    from scaffold_backend.write.transaction import commit

    root = workspace(tmp_path, None)
    layout = Layout(root=root, out_dir=root / "generated", kernels_dir=root / "kernels")
    before = snapshot(tmp_path)
    plan = Plan((
        Change(root / "generated" / "first.h", Action.CREATE, "first\n"),
        Change(root / "generated" / "native" / "second.h", Action.CREATE, "second\n"),
        Change(root / "generated" / ("x" * 300 + ".h"), Action.CREATE, "too long a name\n"),
    ))
    with pytest.raises(OutputError, match="cannot write: .*nothing was changed"):
        commit(plan, layout)
    assert snapshot(tmp_path) == before
    assert not (root / "generated").exists()
