"""No input of any command ends in a traceback: every command (generate, ops, diff, init) and the
option parsing before them, given broken or hostile input, exits 2 with one `error:` line that
names what is wrong (a path, an option, an argument, a YAML line), prints no traceback, and writes
or changes no file. A corpus of cases, then properties (hypothesis) over each command's inputs.

The console script's main() runs in this process for generate, ops and diff (it is what
`scaffold-backend` runs); `init` runs in a real process, since it imports torch to check NAME.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scaffold_testing import REPO, TESTS, write

from scaffold_backend.commands.cli import main
from scaffold_backend.parse.yaml_nodes import MAX_NODES

DATA = TESTS / "data"
LONG = "x" * 300
GENERATE = ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "generated"]


def billion_laughs(levels: int = 9, width: int = 10) -> str:
    """A backend YAML whose anchors expand to width**levels nodes, in a few hundred bytes."""
    lines = ["backend: PrivateUse1", "cpp_namespace: tiny", f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]" for level in range(1, levels)]
    return "\n".join([*lines, f"supported: *a{levels - 1}", ""])


def project(root: Path) -> Path:
    """The small backend's inputs, and one of each thing a path can wrongly be."""
    write(root / "backend.yaml", (DATA / "small_backend.yaml").read_text())
    write(root / "decls.h", (DATA / "declarations_2.13_subset.h").read_text())
    write(root / "afile", "not a directory\n")
    write(root / "bomb.yaml", billion_laughs())
    write(root / "cycle.yaml", "backend: PrivateUse1\ncpp_namespace: tiny\nsupported: &s [abs, *s]\n")
    (root / "latin1.yaml").write_bytes("# caf\xe9\nbackend: PrivateUse1\n".encode("latin-1"))
    (root / "adir").mkdir()
    os.mkfifo(root / "fifo")
    os.symlink("loop", root / "loop")
    return root


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every file's bytes, every symlink's target and every directory, below `root`."""
    entries: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            entries[relative] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            entries[relative] = "<dir>"
        elif path.is_file():
            entries[relative] = path.read_bytes()
        else:
            entries[relative] = "<special>"
    return entries


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def run_main(root: Path, argv: list[str]) -> tuple[int, str, str]:
    """`scaffold-backend ARGV` in `root`, through the console script's main(), in this process."""
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    arguments = sys.argv
    sys.argv = ["scaffold-backend", *argv]
    try:
        with working_directory(root), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as exit_:
        code = exit_.code
    finally:
        sys.argv = arguments
    assert isinstance(code, int), code
    return code, stdout.getvalue(), stderr.getvalue()


def run_process(root: Path, argv: list[str], timeout: float = 600) -> tuple[int, str, str]:
    """`scaffold-backend ARGV` in a process of its own; the timeout only stops a hang."""
    process = subprocess.run(
        [sys.executable, "-m", "scaffold_backend.commands.entry", *argv],
        cwd=root, capture_output=True, text=True, errors="replace", timeout=timeout, check=False,
    )
    return process.returncode, process.stdout, process.stderr


def assert_refused(result: tuple[int, str, str], where: str, code: int = 2) -> None:
    """Exit `code`, and stderr is one `error: WHERE: ...` line (and maybe its hints), no traceback."""
    returned, _, stderr = result
    assert returned == code, stderr
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    prefix = f"error: {where}" + ("" if where.endswith((":", "/")) else ": ")
    assert len(lines) >= 1 and lines[0].startswith(prefix), stderr
    assert all(line.startswith("  hint: ") for line in lines[1:]), stderr


# (id, argv, the `where` of the error line). Paths are relative to the project.
GENERATE_CASES = [
    ("yaml-directory", ["generate", "--yaml", "adir", "--declarations", "decls.h", "--out", "generated"], "adir"),
    (
        "declarations-directory",
        ["generate", "--yaml", "backend.yaml", "--declarations", "adir", "--out", "generated"],
        "adir",
    ),
    ("out-is-a-file", ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "afile"], "afile"),
    ("kernels-is-a-file", [*GENERATE, "--kernels", "afile"], "afile"),
    (
        "out-below-a-file",
        ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "afile/x"],
        "afile/x",
    ),
    (
        "out-name-too-long",
        ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", f"g/{LONG}"],
        f"g/{LONG}",
    ),
    ("kernels-name-too-long", [*GENERATE, "--kernels", LONG], LONG),
    (
        "yaml-name-too-long",
        ["generate", "--yaml", f"{LONG}.yaml", "--declarations", "decls.h", "--out", "g"],
        f"{LONG}.yaml",
    ),
    (
        "path-too-long",
        ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "/".join(["d"] * 2100)],
        "/".join(["d"] * 2100),
    ),
    ("out-empty", ["generate", "--yaml", "backend.yaml", "--out", ""], "--out"),
    ("out-newline", ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "a\nb"], "a\\nb"),
    ("yaml-missing", ["generate", "--yaml", "nope.yaml", "--declarations", "decls.h", "--out", "g"], "nope.yaml"),
    ("yaml-fifo", ["generate", "--yaml", "fifo", "--declarations", "decls.h", "--out", "g"], "fifo"),
    ("yaml-symlink-loop", ["generate", "--yaml", "loop", "--declarations", "decls.h", "--out", "g"], "loop"),
    ("yaml-endless", ["generate", "--yaml", "/dev/zero", "--declarations", "decls.h", "--out", "g"], "../"),
    (
        "yaml-not-utf8",
        ["generate", "--yaml", "latin1.yaml", "--declarations", "decls.h", "--out", "g"],
        "latin1.yaml:1",
    ),
    ("yaml-alias-bomb", ["generate", "--yaml", "bomb.yaml", "--declarations", "decls.h", "--out", "g"], "bomb.yaml:"),
    (
        "yaml-alias-cycle",
        ["generate", "--yaml", "cycle.yaml", "--declarations", "decls.h", "--out", "g"],
        "cycle.yaml:3",
    ),
    ("declarations-fifo", ["generate", "--yaml", "backend.yaml", "--declarations", "fifo", "--out", "g"], "fifo"),
    ("unknown-option", ["generate", "-x"], "-x"),
    ("option-without-value", ["generate", "--out"], "--out"),
    ("extra-argument", ["generate", "surplus"], "scaffold-backend generate"),
]
OPS_CASES = [
    ("status-unknown", ["ops", "--status", "nope", "--declarations", "decls.h"], "--status"),
    ("yaml-directory", ["ops", "--yaml", "adir", "--declarations", "decls.h"], "adir"),
    ("yaml-alias-bomb", ["ops", "--yaml", "bomb.yaml", "--declarations", "decls.h"], "bomb.yaml:"),
    ("declarations-fifo", ["ops", "--declarations", "fifo"], "fifo"),
    ("unknown-option", ["ops", "--stat", "native"], "--stat"),
]
DIFF_CASES = [
    ("format-unknown", ["diff", "decls.h", "decls.h", "--format", "html"], "--format"),
    ("old-directory-without-header", ["diff", "adir", "decls.h"], "adir"),
    ("new-name-too-long", ["diff", "decls.h", LONG], LONG),
    ("old-fifo", ["diff", "fifo", "decls.h"], "fifo"),
    ("old-symlink-loop", ["diff", "loop", "decls.h"], "loop"),
    ("yaml-alias-bomb", ["diff", "decls.h", "decls.h", "--yaml", "bomb.yaml"], "bomb.yaml:"),
    ("missing-new", ["diff", "decls.h"], "NEW"),
]
COMMAND_LINE_CASES = [
    ("no-command", [], "scaffold-backend"),
    ("unknown-command", ["generat"], "generat"),
    ("debug-alone", ["--debug"], "scaffold-backend"),
]


@pytest.mark.parametrize(
    ("argv", "where"),
    [pytest.param(argv, where, id=f"{argv[0] if argv else 'cli'}:{name}")
     for cases in (GENERATE_CASES, OPS_CASES, DIFF_CASES, COMMAND_LINE_CASES) for name, argv, where in cases],
)
def test_bad_input_gets_one_located_line_and_changes_nothing(tmp_path: Path, argv: list[str], where: str) -> None:
    root = project(tmp_path / "project")
    before = snapshot(tmp_path)
    assert_refused(run_main(root, argv), where)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        pytest.param(["init", LONG], "NAME", id="name-too-long"),
        pytest.param(["init", "a/b"], "NAME", id="name-with-a-slash"),
        pytest.param(["init", "npu"], "NAME", id="name-of-another-backend-package"),
        pytest.param(["init", "abc", "--dir", "afile"], "afile", id="dir-is-a-file"),
        pytest.param(["init", "abc", "--dir", f"{LONG}/x"], f"{LONG}/x", id="dir-name-too-long"),
        pytest.param(["init", "abc", "--from-yaml", "adir"], "adir", id="from-yaml-directory"),
        pytest.param(["init", "abc", "--from-yaml", "bomb.yaml"], "bomb.yaml:", id="from-yaml-alias-bomb"),
        pytest.param(["init", "abc", "--from-yaml", "fifo"], "fifo", id="from-yaml-fifo"),
        pytest.param(["init", "abc", "--from-yaml", "latin1.yaml"], "latin1.yaml:1", id="from-yaml-not-utf8"),
        pytest.param(["init", "abc", "--ops", "no_such_op"], "--ops", id="unknown-op"),
        pytest.param(["init", "-x"], "-x", id="unknown-option"),
        pytest.param(["init"], "NAME", id="missing-name"),
    ],
)
def test_init_bad_input_gets_one_located_line_and_creates_nothing(tmp_path: Path, argv: list[str], where: str) -> None:
    root = project(tmp_path / "project")
    before = snapshot(tmp_path)
    assert_refused(run_process(root, argv), where)
    assert snapshot(tmp_path) == before


def _replace(path: str, make: Callable[[Path], None]) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        target = root / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
        make(target)

    return mutate


# What a generated tree's files can wrongly be (the user's code and the generator's own records),
# and the `where` of the error a run gives.
TREE_CASES = [
    ("kernel-file-fifo", _replace("kernels/abs.cpp", os.mkfifo), "kernels/abs.cpp"),
    ("kernel-file-directory", _replace("kernels/abs.cpp", os.mkdir), "kernels/abs.cpp"),
    ("kernel-file-symlink-loop", _replace("kernels/abs.cpp", lambda path: os.symlink(path.name, path)),
     "kernels/abs.cpp"),
    ("custom-op-python-fifo", _replace("kernels/custom_ops/scale.py", os.mkfifo), "kernels/custom_ops/scale.py"),
    ("manifest-fifo", _replace("generated/scaffold_manifest.json", os.mkfifo), "generated/scaffold_manifest.json"),
    ("manifest-directory", _replace("generated/scaffold_manifest.json", os.mkdir), "generated/scaffold_manifest.json"),
    ("journal-fifo", lambda root: os.mkfifo(root / "generated" / ".scaffold_transaction.json"),
     "generated/.scaffold_transaction.json"),
    ("generated-file-fifo", _replace("generated/native/abs.h", os.mkfifo), "generated/native/abs.h"),
    ("generated-file-directory", _replace("generated/native/abs.h", os.mkdir), "generated/native/abs.h"),
]


@pytest.mark.parametrize(
    ("mutate", "where"), [pytest.param(mutate, where, id=name) for name, mutate, where in TREE_CASES]
)
def test_a_broken_tree_gets_one_located_line_and_changes_nothing(
    tmp_path: Path, mutate: Callable[[Path], None], where: str
) -> None:
    """Whatever stands where the generator reads (a FIFO is not waited for), each run says what
    and where, and touches nothing."""
    root = project(tmp_path / "project")
    assert run_main(root, GENERATE)[0] == 0
    mutate(root)
    before = snapshot(tmp_path)
    for argv in (GENERATE, [*GENERATE, "--check"]):
        code, _, stderr = run_main(root, argv)
        assert_refused((code, _, stderr), where, code=code if code in (1, 2) else 2)
    assert snapshot(tmp_path) == before


def test_the_fast_answer_does_not_expand_a_yaml_alias_bomb(tmp_path: Path) -> None:
    """A project's YAML replaced by a bomb after a generation: the plain `generate --check` of
    pre-commit hooks (answered before the generator when the tree is current) goes to the full
    run, which refuses the YAML at once."""
    root = project(tmp_path / "project")
    write(root / "pyproject.toml", '[tool.scaffold-backend]\nyaml = "backend.yaml"\ndeclarations = "decls.h"\n'
          'out = "generated"\n')
    assert run_process(root, ["generate"])[0] == 0
    write(root / "backend.yaml", billion_laughs())
    before = snapshot(tmp_path)
    assert_refused(run_process(root, ["generate", "--check"], timeout=120), "backend.yaml:")
    assert snapshot(tmp_path) == before


def test_aliases_within_the_bound_are_read_as_written(tmp_path: Path) -> None:
    """Anchors and aliases stay usable (torchgen's loader takes them): one list named twice."""
    root = project(tmp_path / "project")
    write(root / "aliases.yaml", "backend: PrivateUse1\ncpp_namespace: tiny\nsupported: &ops [view]\nsymint: *ops\n")
    code, stdout, stderr = run_main(
        root, ["generate", "--yaml", "aliases.yaml", "--declarations", "decls.h", "--out", "g"]
    )
    assert code == 0, stderr
    assert "1 kernel(s)" in stdout
    assert MAX_NODES >= 10_000  # far above any real backend YAML


def test_every_yaml_document_is_read_by_the_one_bounded_loader() -> None:
    """parse/yaml_nodes.compose_yaml bounds a document before anything walks it; no other module
    of the generator calls PyYAML's loaders, so every command (and any later one) gets the bound."""
    loaders = {"compose", "compose_all", "load", "load_all", "safe_load", "safe_load_all", "full_load",
               "full_load_all", "unsafe_load", "unsafe_load_all", "parse", "scan"}
    found = []
    for path in sorted((REPO / "codegen").rglob("*.py")):
        if path.relative_to(REPO).as_posix() == "codegen/parse/yaml_nodes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in loaders and getattr(node.value, "id", None) == "yaml":
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "yaml" and {a.name for a in node.names} & loaders:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


# Properties: whatever a path option holds, whatever word a choice option gets.
PATH_VALUES = st.one_of(
    st.sampled_from(["adir", "afile", "fifo", "loop", "nope/x", "afile/x", "/dev/zero", "-", ".", "bomb.yaml",
                     "cycle.yaml", "latin1.yaml", LONG, f"{LONG}/x", "", " ", "a\tb", "..", "/"]),
    st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=40),
)
PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project(tmp_path_factory.mktemp("hostile") / "project")


def assert_clean(result: tuple[int, str, str]) -> None:
    """Success, drift, or one located error line: never a traceback or another exit status."""
    code, _, stderr = result
    assert code in (0, 1, 2), stderr
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == (0 if code == 0 else 1), stderr
    if code == 2:
        assert all(line.startswith(("error: ", "  hint: ")) for line in stderr.splitlines()), stderr


def _unchanged_unless_it_succeeds(root: Path, argv: list[str], check: Callable[[tuple[int, str, str]], None]) -> None:
    before = snapshot(root)
    result = run_main(root, argv)
    check(result)
    if result[0] != 0:
        assert snapshot(root) == before, argv


@PROPERTY_SETTINGS
@given(option=st.sampled_from(["--yaml", "--declarations", "--out", "--kernels"]), value=PATH_VALUES)
def test_generate_takes_any_path_without_a_traceback(shared_project: Path, option: str, value: str) -> None:
    argv = {"--yaml": "backend.yaml", "--declarations": "decls.h", "--out": "out_of_property"}
    argv[option] = value
    _unchanged_unless_it_succeeds(
        shared_project, ["generate", *[item for pair in argv.items() for item in pair]], assert_clean
    )


@PROPERTY_SETTINGS
@given(value=PATH_VALUES, status=st.text(max_size=20))
def test_ops_takes_any_yaml_and_status_without_a_traceback(shared_project: Path, value: str, status: str) -> None:
    _unchanged_unless_it_succeeds(shared_project, ["ops", "--yaml", value, "--declarations", "decls.h"], assert_clean)
    _unchanged_unless_it_succeeds(
        shared_project, ["ops", "--status", status, "--declarations", "decls.h"], assert_clean
    )


@PROPERTY_SETTINGS
@given(old=PATH_VALUES, new=PATH_VALUES, output_format=st.text(max_size=12))
def test_diff_takes_any_headers_and_format_without_a_traceback(
    shared_project: Path, old: str, new: str, output_format: str
) -> None:
    _unchanged_unless_it_succeeds(shared_project, ["diff", old, new], assert_clean)
    _unchanged_unless_it_succeeds(
        shared_project, ["diff", "decls.h", "decls.h", "--format", output_format], assert_clean
    )


WORDS = ["generate", "ops", "diff", "--yaml", "--out", "--kernels", "--declarations", "--check", "--dry-run",
         "--force", "--debug", "--status", "--format", "--json", "--all", "-h", "--version", "-x", "--", "=", "adir",
         "afile", "fifo", "decls.h", "backend.yaml", "native", "json", ""]


@PROPERTY_SETTINGS
@given(argv=st.lists(st.sampled_from(WORDS), max_size=6))
def test_any_command_line_parses_without_a_traceback(shared_project: Path, argv: list[str]) -> None:
    """Random command lines (init apart: it runs in its own process, below): an answer, or a usage
    error said like every other error."""
    if "--debug" in argv[:1]:
        argv = argv[1:]  # --debug asks for tracebacks
    _unchanged_unless_it_succeeds(shared_project, argv, assert_clean)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.sampled_from(["npu", "cuda", "torch", "nn", LONG, "a b", "../x", "Foo", "é"]),
                      st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]),
                              min_size=1, max_size=30)))
def test_init_takes_any_name_without_a_traceback(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    root = tmp_path_factory.mktemp("init")
    before = snapshot(root)
    result = run_process(root, ["init", "--dry-run", "--", name])
    assert_clean(result)
    assert snapshot(root) == before  # --dry-run writes nothing, and a refusal neither
