"""The schema cache (codegen/schema_cache.py): a generation that reads parsed schemas and kernel
signatures back writes exactly what one that computes them writes, and a cache that is broken,
foreign or not the user's own is never a reason to fail or to write something else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from scaffold_testing import TESTS, tree

ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "decls.h", "--out", "generated"]


def _generate(root: Path, cache_home: Path) -> subprocess.CompletedProcess[str]:
    """A fresh tree at `root`, with `cache_home` as the user's cache."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    shutil.copy(TESTS / "data" / "small_backend.yaml", root / "backend.yaml")
    shutil.copy(TESTS / "data" / "declarations_2.13_subset.h", root / "decls.h")
    process = subprocess.run(
        [sys.executable, "-m", "scaffold_backend.commands.cli", *ARGS],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )
    assert process.returncode == 0, process.stderr
    assert "Traceback" not in process.stderr
    return process


def _cache_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "scaffold-backend" / "schemas").glob("*.pickle"))


def test_a_warm_cache_writes_what_a_cold_run_writes(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    cold = _generate(tmp_path / "cold", cache_home)
    [cache_file] = _cache_files(cache_home)
    written = cache_file.stat().st_mtime_ns
    warm = _generate(tmp_path / "warm", cache_home)
    assert tree(tmp_path / "cold") == tree(tmp_path / "warm")
    assert cold.stdout == warm.stdout
    # Everything the second run needed was in the cache: nothing was added, so nothing rewritten.
    assert cache_file.stat().st_mtime_ns == written
    assert (cache_file.parent.stat().st_mode & 0o777) == 0o700


def test_a_broken_cache_is_a_cache_miss(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    _generate(tmp_path / "reference", cache_home)
    [cache_file] = _cache_files(cache_home)
    for damage in (b"", b"not a pickle", cache_file.read_bytes()[:1000], b"\x80\x05N."):
        cache_file.write_bytes(damage)
        _generate(tmp_path / "again", cache_home)
        assert tree(tmp_path / "again") == tree(tmp_path / "reference")
        # The run wrote a good cache in place of the broken one.
        assert len(cache_file.read_bytes()) > 1000


def test_a_cache_directory_others_may_write_is_neither_read_nor_written(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    _generate(tmp_path / "reference", cache_home)
    [cache_file] = _cache_files(cache_home)
    directory = cache_file.parent
    # A planted file in a world-writable directory: unpickling it would run someone else's code.
    cache_file.write_bytes(b"cos\nsystem\n(S'touch planted'\ntR.")
    directory.chmod(0o777)
    try:
        _generate(tmp_path / "again", cache_home)
    finally:
        directory.chmod(0o700)
    assert not (tmp_path / "again" / "planted").exists()
    assert tree(tmp_path / "again") == tree(tmp_path / "reference")
    assert cache_file.read_bytes().startswith(b"cos")  # left alone, not rewritten


def test_another_header_gets_its_own_cache_file(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    _generate(tmp_path / "first", cache_home)
    root = tmp_path / "second"
    _generate(root, cache_home)
    header = root / "decls.h"
    header.write_text(header.read_text() + "\n// a comment changes the digest, not the ops\n")
    subprocess.run(
        [sys.executable, "-m", "scaffold_backend.commands.cli", *ARGS],
        cwd=root,
        capture_output=True,
        check=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )
    assert len(_cache_files(cache_home)) == 2
