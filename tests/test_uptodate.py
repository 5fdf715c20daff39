"""The fast "up to date" answer: decided from the manifest without importing the generator, and
never wrong: every kind of change falls through to the full run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scaffold_testing import TESTS, run_cli_process

from scaffold_backend.model.outputs import END_MARKER, START_MARKER
from scaffold_backend.write.uptodate_memory import stamp_path

ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "generated"]

# Runs the CLI in this process and reports whether the generator proper was imported.
PROBE = """\
import sys
from scaffold_backend.commands.cli import cli
try:
    cli(sys.argv[1:], prog_name="scaffold-backend")
except SystemExit as exit:
    code = exit.code or 0
print("IMPORTED" if {"torchgen.model", "jinja2", "scaffold_backend.commands.generate"} & set(sys.modules) else "LIGHT")
sys.exit(code)
"""


def _project(tmp_path: Path) -> Path:
    shutil.copy(TESTS / "data" / "small_backend.yaml", tmp_path / "backend.yaml")
    shutil.copy(TESTS / "data" / "declarations_2.13_subset.h", tmp_path / "decls.h")
    process = run_cli_process(ARGS, tmp_path)
    assert process.returncode == 0, process.stderr
    return tmp_path


def _probe(root: Path, *extra: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [sys.executable, "-c", PROBE, *ARGS, *extra], cwd=root, capture_output=True, text=True, check=False
    )
    *output, path = process.stdout.splitlines()
    return process.returncode, "\n".join(output), path


def test_an_up_to_date_tree_is_answered_without_the_generator(tmp_path: Path) -> None:
    root = _project(tmp_path)
    full = run_cli_process([*ARGS, "--check"], root)  # a full run leaves the stamp
    for extra in ("--check", "--dry-run", ""):
        code, output, path = _probe(root, *filter(None, [extra]))
        assert (code, path) == (0, "LIGHT"), output
        assert output == full.stdout.rstrip("\n")


def _edit_generated(root: Path) -> None:
    path = root / "generated" / "native" / "abs.h"
    path.write_text(path.read_text() + "// edited\n")


def _edit_yaml(root: Path) -> None:
    (root / "backend.yaml").write_text((root / "backend.yaml").read_text().replace("  - abs\n", "  - abs\n  - mm\n"))


def _touch_declarations(root: Path) -> None:
    (root / "decls.h").write_text((root / "decls.h").read_text() + "\n// a comment changes the digest\n")


def _delete_kernel(root: Path) -> None:
    (root / "kernels" / "abs.cpp").unlink()


def _conflict_in_kernel(root: Path) -> None:
    path = root / "kernels" / "abs.cpp"
    path.write_text(path.read_text() + f"{START_MARKER}\nmine\n=======\ntheirs\n{END_MARKER}\n")


def _delete_generated(root: Path) -> None:
    (root / "generated" / "sources.cmake").unlink()


def _corrupt_manifest(root: Path) -> None:
    (root / "generated" / "scaffold_manifest.json").write_text("{")


CHANGES = [
    _edit_generated, _edit_yaml, _touch_declarations, _delete_kernel, _conflict_in_kernel, _delete_generated,
    _corrupt_manifest,
]


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_goes_to_the_full_run(tmp_path: Path, change: Callable[[Path], None]) -> None:
    root = _project(tmp_path)
    run_cli_process([*ARGS, "--check"], root)
    change(root)
    code, output, path = _probe(root, "--check")
    assert path == "IMPORTED", output
    assert code != 0


def _remember_settled_tree(root: Path) -> None:
    """Leave the fast check's memory of the tree complete: file statuses and manifest facts."""
    run_cli_process([*ARGS, "--check"], root)
    time.sleep(2.2)  # files younger than 2 s are never remembered (racily clean)
    code, output, path = _probe(root, "--check")
    assert (code, path) == (0, "LIGHT"), output
    document = json.loads(stamp_path(root / "generated").with_suffix(".files.json").read_text())
    assert document["facts"]["kernels"] == 12 and "native/abs.h" in document["facts"]["files"]


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_goes_to_the_full_run_when_the_tree_is_remembered(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    """With the manifest's facts and every file's status remembered, the check answers without
    parsing the manifest; every change must still reach the full run."""
    root = _project(tmp_path)
    _remember_settled_tree(root)
    change(root)
    code, output, path = _probe(root, "--check")
    assert path == "IMPORTED", output
    assert code != 0


def test_a_damaged_or_exposed_memory_of_the_tree_is_not_used(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _remember_settled_tree(root)
    memory = stamp_path(root / "generated").with_suffix(".files.json")
    document = json.loads(memory.read_text())
    # Facts that leave a file out would answer "up to date" for an edit of it, if trusted.
    document["facts"]["files"] = [name for name in document["facts"]["files"] if name != "native/abs.h"]
    _edit_generated(root)
    for damaged in ('{"facts": ', json.dumps({**document, "facts": {"kernels": "12"}})):
        memory.write_text(damaged)
        code, output, path = _probe(root, "--check")
        assert (code, path) == (1, "IMPORTED"), output
    memory.write_text(json.dumps(document))
    memory.parent.chmod(0o777)  # others may write there: not read
    try:
        code, output, path = _probe(root, "--check")
        assert (code, path) == (1, "IMPORTED"), output
    finally:
        memory.parent.chmod(0o755)


def test_hand_edited_generated_file_is_drift_under_check(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _edit_generated(root)
    process = run_cli_process([*ARGS, "--check"], root)
    assert process.returncode == 1
    assert "   update  generated/native/abs.h" in process.stdout
    assert process.stderr.startswith(
        "error: 1 file(s) are stale against decls.h and backend.yaml; edited by hand: generated/native/abs.h\n"
    )


@pytest.mark.parametrize("relative", ["generated/native/abs.h", "kernels/abs.cpp"])
def test_a_file_replaced_by_a_symlink_is_left_to_the_full_run(tmp_path: Path, relative: str) -> None:
    """The fast check opens the files it reads without following a symlink (it resolves only
    directories), so a symlink to an identical copy outside the tree is not read as current."""
    (tmp_path / "project").mkdir()
    root = _project(tmp_path / "project")
    run_cli_process([*ARGS, "--check"], root)
    path = root / relative
    outside = tmp_path / "outside" / path.name
    outside.parent.mkdir()
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)
    code, output, probe_path = _probe(root, "--check")
    assert probe_path == "IMPORTED", output


def _remembered_files(root: Path) -> dict[str, list[int]]:
    """What the fast check remembers of the tree at `root` (see uptodate._KnownFiles)."""
    path = stamp_path(root / "generated").with_suffix(".files.json")
    files: dict[str, list[int]] = json.loads(path.read_text())["files"]
    return files


def test_a_file_changed_without_a_new_size_or_mtime_is_still_seen(tmp_path: Path) -> None:
    """Files verified by an earlier check are not read again while their status (size, mtime,
    ctime, inode) is unchanged. An edit that keeps the size and puts the mtime back still
    changes the ctime, so the check reads the file and leaves the tree to the full run."""
    root = _project(tmp_path)
    run_cli_process([*ARGS, "--check"], root)
    time.sleep(2.2)  # files younger than 2 s are never remembered (racily clean)
    code, output, path = _probe(root, "--check")
    assert (code, path) == (0, "LIGHT"), output
    remembered = _remembered_files(root)
    assert "native/abs.h" in remembered and "../kernels/abs.cpp" in remembered
    code, output, path = _probe(root, "--check")  # answered from the remembered status
    assert (code, path) == (0, "LIGHT"), output
    header = root / "generated" / "native" / "abs.h"
    before = header.stat()
    text = header.read_text()
    header.write_text(text.replace("Tensor", "Tensoz", 1))  # same size
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert header.stat().st_size == before.st_size and header.stat().st_mtime_ns == before.st_mtime_ns
    code, output, path = _probe(root, "--check")
    assert path == "IMPORTED" and code != 0, output


# The console script as installed (`scaffold_backend.commands.entry:main`), reporting whether click and
# the command-line module were imported.
ENTRY_PROBE = """\
import sys
from scaffold_backend.commands.entry import main
sys.argv = ["scaffold-backend", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    code = exit.code or 0
print("CLI" if {"click", "scaffold_backend.commands.cli"} & set(sys.modules) else "NO-CLI")
sys.exit(code)
"""


def _settings_project(tmp_path: Path) -> Path:
    """A project whose pyproject.toml names its inputs, so that a plain `generate` needs no
    option: the command line of pre-commit hooks and CI jobs."""
    root = _project(tmp_path)
    (root / "pyproject.toml").write_text(
        '[tool.scaffold-backend]\nyaml = "backend.yaml"\ndeclarations = "decls.h"\nout = "generated"\n'
    )
    return root


def _entry_probe(root: Path, *args: str) -> tuple[int, str, str, str]:
    process = subprocess.run(
        [sys.executable, "-c", ENTRY_PROBE, *args], cwd=root, capture_output=True, text=True, check=False
    )
    *output, imported = process.stdout.splitlines()
    return process.returncode, "\n".join(output), process.stderr, imported


def test_the_console_script_answers_up_to_date_without_click(tmp_path: Path) -> None:
    root = _settings_project(tmp_path)
    full = run_cli_process(["generate", "--check"], root)  # through the CLI: it leaves the stamp
    assert full.returncode == 0, full.stderr
    for args in (["generate", "--check"], ["generate"]):
        code, output, errors, imported = _entry_probe(root, *args)
        assert (code, imported, errors) == (0, "NO-CLI", ""), output
        assert output == full.stdout.rstrip("\n") == "12 kernel(s), everything up to date"


def test_the_console_script_leaves_options_doubt_and_errors_to_the_cli(tmp_path: Path) -> None:
    root = _settings_project(tmp_path)
    run_cli_process(["generate", "--check"], root)
    code, output, errors, imported = _entry_probe(root, "generate", "--check", "--out", "generated")
    assert (code, imported) == (0, "CLI"), errors  # an option: click parses it
    _edit_generated(root)
    code, output, errors, imported = _entry_probe(root, "generate", "--check")
    assert (code, imported) == (1, "CLI")
    assert "   update  generated/native/abs.h" in output
    assert errors.startswith("error: 1 file(s) are stale")
    (root / "pyproject.toml").write_text("[tool.scaffold-backend\n")
    code, output, errors, imported = _entry_probe(root, "generate")
    assert (code, imported) == (2, "CLI")
    assert errors.startswith("error: ") and "pyproject.toml" in errors and "Traceback" not in errors


# The fast answer and the full run are one answer: after each of these edits of a generated tree,
# both say "current" (the edit changes nothing a run would write) or both say "stale". Each edit
# touches its own file, so any of them can be combined.
def _definition_lines(lines: list[str]) -> tuple[int, int]:
    """The first kernel definition of a stub file: its head line and the line closing it."""
    head = next(index for index, line in enumerate(lines) if line.endswith(") {"))
    return head, lines.index("}", head)


def _edit_kernel_file(root: Path, name: str, edit: Callable[[list[str]], list[str]]) -> None:
    path = root / "kernels" / name
    path.write_text("\n".join(edit(path.read_text().split("\n"))))


def _implement_kernel(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, end = _definition_lines(lines)
        return [*lines[: head + 1], "  return at::abs_out(out, self);", *lines[end:]]

    _edit_kernel_file(root, "abs.cpp", edit)


def _reformat_definition(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, _ = _definition_lines(lines)
        return [*lines[:head], lines[head].replace(", ", ",\n    "), *lines[head + 1 :]]

    _edit_kernel_file(root, "tril.cpp", edit)


def _add_a_helper_and_comments(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, _ = _definition_lines(lines)
        helper = ["// <<<<<<< yours (in a comment: no merge)", "static int helper() { return 1; }", ""]
        return [*lines[:head], *helper, *lines[head:]]

    _edit_kernel_file(root, "view.cpp", edit)


def _crlf_and_byte_order_mark(root: Path) -> None:
    path = root / "kernels" / "cat.cpp"
    path.write_bytes("\ufeff".encode() + path.read_bytes().replace(b"\n", b"\r\n"))


def _touch_generated(root: Path) -> None:
    os.utime(root / "generated" / "PrivateUse1Fallback.cpp")


def _remove_a_definition(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, end = _definition_lines(lines)
        return [*lines[:head], *lines[end + 1 :]]

    _edit_kernel_file(root, "unique_dim.cpp", edit)


def _comment_out_a_definition(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, end = _definition_lines(lines)
        return [*lines[:head], "/*", *lines[head : end + 1], "*/", *lines[end + 1 :]]

    _edit_kernel_file(root, "resize.cpp", edit)


def _disable_a_definition(root: Path) -> None:
    def edit(lines: list[str]) -> list[str]:
        head, end = _definition_lines(lines)
        return [*lines[:head], "#if 0", *lines[head : end + 1], "#endif", *lines[end + 1 :]]

    _edit_kernel_file(root, "empty.cpp", edit)


def _remove_a_fake_kernel(root: Path) -> None:
    path = root / "kernels" / "custom_ops" / "scale.py"
    path.write_text(path.read_text().replace("def scale_out_fake(", "def renamed_fake("))


def _leave_a_conflict(root: Path) -> None:
    conflict = [START_MARKER, "mine", "=======", "theirs", END_MARKER]
    _edit_kernel_file(root, "__and__.cpp", lambda lines: [*lines, *conflict])


CURRENT_EDITS = [_implement_kernel, _reformat_definition, _add_a_helper_and_comments, _crlf_and_byte_order_mark,
                 _touch_generated]
STALE_EDITS = [_remove_a_definition, _comment_out_a_definition, _disable_a_definition, _remove_a_fake_kernel,
               _leave_a_conflict, _edit_generated, _delete_generated]


def _answers(root: Path) -> tuple[bool, bool]:
    """(the fast answer says current, the full run says current): the fast one in this process,
    without the generator; the full one is `generate --check`'s plan."""
    from scaffold_backend.commands.generate import plan_only
    from scaffold_backend.commands.project import resolve_generate_options
    from scaffold_backend.write.uptodate import check_up_to_date

    options = resolve_generate_options(
        root, Path("backend.yaml"), Path("generated"), None, Path("decls.h"), False
    )
    fast = check_up_to_date(options)
    result = plan_only(options, check=True)
    return fast is not None, not result.plan and not result.conflicts()


@pytest.mark.parametrize("edit", CURRENT_EDITS + STALE_EDITS, ids=lambda edit: edit.__name__.strip("_"))
def test_the_fast_answer_and_the_full_run_agree(tmp_path: Path, edit: Callable[[Path], None]) -> None:
    root = _project(tmp_path)
    run_cli_process([*ARGS, "--check"], root)  # leaves the stamp the fast answer needs
    edit(root)
    assert _answers(root) == (edit in CURRENT_EDITS,) * 2


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.sampled_from(CURRENT_EDITS + STALE_EDITS), min_size=1, max_size=4, unique=True))
def test_the_two_answers_agree_on_combined_edits(tmp_path: Path, edits: list[Callable[[Path], None]]) -> None:
    root = tmp_path / f"tree{len(list(tmp_path.iterdir()))}"
    root.mkdir()
    _project(root)
    run_cli_process([*ARGS, "--check"], root)
    for edit in edits:
        edit(root)
    assert _answers(root) == (all(edit in CURRENT_EDITS for edit in edits),) * 2
