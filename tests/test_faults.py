"""Fault tests of `generate` as a transaction (issue 9), with real processes: kill -9 at random
points of a large generate, then a rerun; and two runs at once on one tree. Slow (a large
generate takes seconds), so CI runs them and the quick suite does not."""

from __future__ import annotations

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

from scaffold_backend.inputs import load_declarations

pytestmark = pytest.mark.slow

ARGS = ["generate", "--yaml", "backend.yaml", "--out", "generated"]
TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}$")
SEED = 20261123


def cli(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scaffold_backend.cli", *ARGS, *extra],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


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


def test_kill_9_at_random_points_then_rerun_gives_the_new_tree(tmp_path: Path) -> None:
    old_yaml, new_yaml = large_yamls(tmp_path)
    base = tmp_path / "base"
    write(base / "backend.yaml", old_yaml)
    assert finish(cli(base))[0] == 0
    old = project_tree(base)

    reference = tmp_path / "reference"
    shutil.copytree(base, reference)
    write(reference / "backend.yaml", new_yaml)
    started = time.monotonic()
    code, stderr = finish(cli(reference))
    duration = time.monotonic() - started
    assert code == 0, stderr
    new = project_tree(reference)
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
            [sys.executable, "-m", "scaffold_backend.cli", "generate", "--yaml", f"{name}.yaml", "--out", "generated"],
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
