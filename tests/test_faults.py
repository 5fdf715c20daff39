"""Fault tests of `generate` as a transaction, with real processes: kill -9 at every phase of a
write (fault_injection.py runs the command line in a process that stops itself at a named step of
the transaction, where the test kills it), then a rerun; kill -9 at random moments; two runs at once on one
tree. The small-YAML variant runs in the quick suite; the large ones (every required op) are slow,
so CI runs them."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scaffold_testing import TESTS, tree, write

from scaffold_backend.parse.inputs import load_declarations

ARGS = ["generate", "--yaml", "backend.yaml", "--out", "generated"]
SMALL_ARGS = [*ARGS, "--declarations", "RegistrationDeclarations.h"]
TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}$")
JOURNAL = ".scaffold_transaction.json"
SEED = 20261123


def cli(root: Path, *extra: str, args: list[str] = ARGS) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scaffold_backend.commands.cli", *args, *extra],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def kill_at(root: Path, point: str, args: list[str]) -> None:
    """Run `args` in `root` until the transaction reaches `point`, then kill -9 it."""
    process = stopped_at(root, point, args)
    process.send_signal(signal.SIGKILL)
    process.wait()


def stopped_at(root: Path, point: str, args: list[str], timeout: float = 300.0) -> subprocess.Popen[bytes]:
    """Run `args` in `root` until the transaction reaches `point` (the process stops itself there,
    holding its lock). Fails when the run ends without reaching the point."""
    log = root.parent / f"{root.name}.stderr"
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(TESTS / "fault_injection.py"), point, *args], cwd=root,
            stdout=subprocess.DEVNULL, stderr=stderr,
        )
    deadline = time.monotonic() + timeout
    while True:
        pid, status = os.waitpid(process.pid, os.WUNTRACED | os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            pytest.fail(f"the run did not reach {point} in {timeout:g} s")
        time.sleep(0.01)
    if not os.WIFSTOPPED(status):
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        pytest.fail(f"the run ended before {point}: {log.read_text()}")
    return process


def journal_operations(root: Path) -> int:
    return len(json.loads((root / "generated" / JOURNAL).read_text())["operations"])


def assert_killed_state(root: Path, point: str, old: dict[str, bytes], new: dict[str, bytes]) -> None:
    """What a kill at `point` leaves: always a journal; while staging, the old tree and the staged
    temporaries (the next run deletes them); once decided, any mix, which the next run completes;
    after the last rename, the new tree."""
    journal = root / "generated" / JOURNAL
    assert journal.exists(), point
    assert (json.loads(journal.read_text()).get("state") == "staging") == (point == "staged"), point
    if point in ("staged", "journal"):
        assert project_tree(root) == old, point
    if point == "staged":
        assert leftovers(root), "staging left no temporary file to clean"
    if point == "committed":
        assert project_tree(root) == new, point


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    _, stderr = process.communicate()
    return process.returncode, stderr


def project_tree(root: Path) -> dict[str, bytes]:
    """generated/ and kernels/, without the transaction's own files (temporaries, journal)."""
    return {
        f"{top}/{name}": content
        for top in ("generated", "kernels")
        for name, content in tree(root / top).items()
        if not TEMPORARY.match(Path(name).name) and Path(name).name != ".scaffold_transaction.json"
    }


def leftovers(root: Path) -> list[str]:
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob(".*")
        if TEMPORARY.match(path.name) or path.name == ".scaffold_transaction.json"
    )


def large_yamls(tmp_path: Path) -> tuple[str, str]:
    """All required ops of the installed torch (old), and a third of them dropped with another
    shard count (new): an upgrade that rewrites, creates and deletes hundreds of files."""
    required = sorted(d.op_name for d in load_declarations(None, tmp_path) if d.required)
    head = "backend: PrivateUse1\ncpp_namespace: every_op\ndevice: every_op\n"
    old = head + "shards: 16\nsupported:\n" + "".join(f"  - {op}\n" for op in required)
    new = head + "shards: 8\ndevice_guard: true\nsupported:\n" + "".join(
        f"  - {op}\n" for index, op in enumerate(required) if index % 3
    )
    return old, new


def generate_in(root: Path, yaml_text: str, args: list[str] = ARGS) -> None:
    """Give the project at `root` the YAML `yaml_text` and generate it, successfully."""
    write(root / "backend.yaml", yaml_text)
    code, stderr = finish(cli(root, args=args))
    assert code == 0, stderr


def generate_copy(base: Path, copy: Path, yaml_text: str, args: list[str] = ARGS) -> float:
    """Copy the project `base` to `copy` and generate it with `yaml_text`; the run's seconds."""
    shutil.copytree(base, copy)
    started = time.monotonic()
    generate_in(copy, yaml_text, args)
    return time.monotonic() - started


def small_yamls() -> tuple[str, str]:
    """The small backend (old) and an upgrade of it (new) that rewrites, creates, deletes and
    merges: another shard count, mm.out added, tril.out dropped, abs_ joining abs's kernel file."""
    old = (TESTS / "data" / "small_backend.yaml").read_text()
    new = (old.replace("shards: 2", "shards: 3").replace("  - tril.out\n", "  - mm.out\n")
           .replace("  - abs\n", "  - abs\n  - abs_\n").replace("never: [mm.out]", "never: []"))
    assert new.count("\n") == old.count("\n") + 1
    return old, new


@pytest.fixture(scope="module")
def small_upgrade(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, bytes], dict[str, bytes], dict[str, bytes], int]:
    """A generated small project with a hand-edited kernel file (so the upgrade merges); the old
    and new trees; the tree the old YAML gives after a completed upgrade (kernel files keep what
    the upgrade added: kernels are never deleted); how many operations the upgrade's transaction
    has."""
    old_yaml, new_yaml = small_yamls()
    directory = tmp_path_factory.mktemp("small")
    base = directory / "base"
    write(base / "RegistrationDeclarations.h", (TESTS / "data" / "declarations_2.13_subset.h").read_text())
    generate_in(base, old_yaml, SMALL_ARGS)
    abs_cpp = base / "kernels" / "abs.cpp"
    abs_cpp.write_text(abs_cpp.read_text().replace("// ", "// edited: ", 1))
    old = project_tree(base)

    reference = directory / "reference"
    generate_copy(base, reference, new_yaml, SMALL_ARGS)
    new = project_tree(reference)
    assert b"// edited: " in new["kernels/abs.cpp"] and b"abs_(" in new["kernels/abs.cpp"]
    generate_in(reference, old_yaml, SMALL_ARGS)
    back_again = project_tree(reference)

    probe = directory / "probe"
    shutil.copytree(base, probe)
    write(probe / "backend.yaml", new_yaml)
    kill_at(probe, "journal", SMALL_ARGS)
    return base, old, new, back_again, journal_operations(probe)


def small_points(operations: int) -> list[str]:
    return ["staged", "journal", "operation:1", f"operation:{operations // 2}",
            f"operation:{operations - 1}", f"operation:{operations}", "committed"]


def test_kill_9_at_every_phase_of_a_small_generate_then_rerun(
    tmp_path: Path, small_upgrade: tuple[Path, dict[str, bytes], dict[str, bytes], dict[str, bytes], int]
) -> None:
    """Deterministic: the kill lands in each phase (staging, journal, the renames, after the
    manifest). A rerun with the new YAML gives the new tree. One with the old YAML gives the old
    tree when the kill came before the decision, else what the old YAML gives after a completed
    upgrade; never a false "edited by hand"."""
    base, old, new, back_again, operations = small_upgrade
    old_yaml, new_yaml = small_yamls()
    assert operations > 6
    for point in small_points(operations):
        work = tmp_path / point.replace(":", "_")
        shutil.copytree(base, work)
        write(work / "backend.yaml", new_yaml)
        kill_at(work, point, SMALL_ARGS)
        assert_killed_state(work, point, old, new)
        back = tmp_path / f"{work.name}_back"
        shutil.copytree(work, back)

        code, stderr = finish(cli(work, args=SMALL_ARGS))
        assert code == 0, f"{point}: {stderr}"
        assert project_tree(work) == new, f"{point}: the rerun did not give the new tree"
        assert leftovers(work) == []
        assert finish(cli(work, "--check", args=SMALL_ARGS))[0] == 0

        write(back / "backend.yaml", old_yaml)
        code, stderr = finish(cli(back, args=SMALL_ARGS))
        assert code == 0, f"{point}, back to the old YAML: {stderr}"
        assert project_tree(back) == (old if point == "staged" else back_again), point
        assert leftovers(back) == []
        assert finish(cli(back, "--check", args=SMALL_ARGS))[0] == 0


def test_kill_9_while_a_rerun_completes_an_interrupted_write(
    tmp_path: Path, small_upgrade: tuple[Path, dict[str, bytes], dict[str, bytes], dict[str, bytes], int]
) -> None:
    """A run killed while it completes another's interrupted write: the journal is still there,
    and the run after it completes the write."""
    base, _, new, _, operations = small_upgrade
    work = tmp_path / "work"
    shutil.copytree(base, work)
    write(work / "backend.yaml", small_yamls()[1])
    kill_at(work, f"operation:{operations // 3}", SMALL_ARGS)
    kill_at(work, f"operation:{2 * operations // 3}", SMALL_ARGS)
    assert (work / "generated" / JOURNAL).exists()
    code, stderr = finish(cli(work, args=SMALL_ARGS))
    assert code == 0, stderr
    assert project_tree(work) == new
    assert leftovers(work) == []
    assert finish(cli(work, "--check", args=SMALL_ARGS))[0] == 0


@pytest.mark.slow
def test_kill_9_at_every_phase_of_a_large_generate_then_rerun(tmp_path: Path) -> None:
    """Every required op: the kill lands in each phase, and at a few renames drawn at random."""
    old_yaml, new_yaml = large_yamls(tmp_path)
    base = tmp_path / "base"
    generate_in(base, old_yaml)
    old = project_tree(base)
    generate_copy(base, tmp_path / "reference", new_yaml)
    new = project_tree(tmp_path / "reference")

    probe = tmp_path / "probe"
    shutil.copytree(base, probe)
    write(probe / "backend.yaml", new_yaml)
    kill_at(probe, "journal", ARGS)
    operations = journal_operations(probe)
    shutil.rmtree(probe)
    assert operations > 100
    generator = random.Random(SEED)
    drawn = sorted(generator.sample(range(2, operations - 1), 2))
    points = ["staged", "journal", "operation:1", *(f"operation:{k}" for k in drawn),
              f"operation:{operations - 1}", "committed"]
    for point in points:
        work = tmp_path / point.replace(":", "_")
        shutil.copytree(base, work)
        write(work / "backend.yaml", new_yaml)
        kill_at(work, point, ARGS)
        assert_killed_state(work, point, old, new)
        code, stderr = finish(cli(work))
        assert code == 0, f"{point}: {stderr}"
        assert project_tree(work) == new, f"{point}: the rerun did not give the new tree"
        assert leftovers(work) == []
        assert finish(cli(work, "--check"))[0] == 0
        shutil.rmtree(work)
    print(f"kill -9 points of {operations} operations (seed {SEED}): {points}")


@pytest.mark.slow
def test_kill_9_at_random_points_then_rerun_gives_the_new_tree(tmp_path: Path) -> None:
    old_yaml, new_yaml = large_yamls(tmp_path)
    base = tmp_path / "base"
    generate_in(base, old_yaml)
    old = project_tree(base)
    duration = generate_copy(base, tmp_path / "reference", new_yaml)
    new = project_tree(tmp_path / "reference")
    assert new != old

    generator = random.Random(SEED)
    outcomes = []
    for attempt in range(5):
        work = tmp_path / f"attempt{attempt}"
        shutil.copytree(base, work)
        write(work / "backend.yaml", new_yaml)
        process = cli(work)
        # Most of a run is reading and planning; the writes come at the end, so aim there.
        time.sleep(generator.uniform(0.5, 1.05) * duration)
        process.send_signal(signal.SIGKILL)
        process.wait()
        interrupted = os.path.exists(work / "generated" / ".scaffold_transaction.json")
        after_kill = project_tree(work)
        if not interrupted:
            assert after_kill in (old, new), f"attempt {attempt}: a mixed tree without a journal"
        outcomes.append("journal" if interrupted else "new" if after_kill == new else "old")
        code, stderr = finish(cli(work))
        assert code == 0, stderr
        assert project_tree(work) == new, f"attempt {attempt}: the rerun did not give the new tree"
        assert leftovers(work) == []
        assert finish(cli(work, "--check"))[0] == 0
    print(f"kill -9 outcomes (seed {SEED}): {outcomes}")


@pytest.mark.slow
def test_two_concurrent_runs_never_mix_their_trees(tmp_path: Path) -> None:
    small = (TESTS / "data" / "small_backend.yaml").read_text()
    header = (TESTS / "data" / "declarations_2.13_subset.h").read_text()
    yamls = {"a": small, "b": small.replace("shards: 2", "shards: 3").replace("  - tril.out\n", "  - mm.out\n")}

    def fresh(name: str) -> Path:
        root = tmp_path / name
        write(root / "RegistrationDeclarations.h", header)
        write(root / "pyproject.toml", '[tool.scaffold-backend]\ndeclarations = "RegistrationDeclarations.h"\n')
        return root

    def run(root: Path, name: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "scaffold_backend.commands.cli", "generate", "--yaml", f"{name}.yaml",
             "--out", "generated"],
            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def sequential(order: str) -> dict[str, bytes]:
        root = fresh(f"sequential_{order}")
        for name in order:
            write(root / f"{name}.yaml", yamls[name])
            assert finish(run(root, name))[0] == 0
        return project_tree(root)

    expected = {order: sequential(order) for order in ("a", "b", "ab", "ba")}
    for attempt in range(3):
        root = fresh(f"concurrent{attempt}")
        for name, text in yamls.items():
            write(root / f"{name}.yaml", text)
        processes = {name: run(root, name) for name in yamls}
        results = {name: finish(process) for name, process in processes.items()}
        for code, stderr in results.values():
            assert code == 0 or "another scaffold-backend run holds the lock" in stderr, stderr
        assert project_tree(root) in expected.values(), f"attempt {attempt}: a tree no sequence of runs gives"
        assert leftovers(root) == []


def test_runs_on_sibling_outputs_do_not_wait_and_runs_on_one_output_do(tmp_path: Path) -> None:
    """The lock is the output directory's own: run A stops in the middle of its write (holding its
    lock) on `a/`, which did not exist before it; run B on the sibling `b/` (also new) completes
    meanwhile; run C on `a/` waits, then fails with one clear line and changes nothing."""
    root = tmp_path / "project"
    write(root / "backend.yaml", (TESTS / "data" / "small_backend.yaml").read_text())
    write(root / "RegistrationDeclarations.h", (TESTS / "data" / "declarations_2.13_subset.h").read_text())

    def arguments(name: str) -> list[str]:
        return ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h",
                "--out", f"{name}/generated", "--kernels", f"{name}/kernels"]

    holder = stopped_at(root, "journal", arguments("a"))
    try:
        code, stderr = finish(cli(root, args=arguments("b")))
        assert code == 0, stderr
        before = tree(root / "a")
        code, stderr = finish(cli(root, args=arguments("a")))
        assert code == 2
        assert stderr.splitlines()[0] == (
            "error: generated: another scaffold-backend run holds the lock on this directory (waited 10 s)"
        ), stderr
        assert "Traceback" not in stderr
        assert tree(root / "a") == before
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    code, stderr = finish(cli(root, args=arguments("a")))
    assert code == 0, stderr
    assert project_tree(root / "a") == project_tree(root / "b")
    assert leftovers(root) == []
    assert finish(cli(root, "--check", args=arguments("a")))[0] == 0
