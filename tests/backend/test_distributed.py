"""torch.distributed on foo: real processes on localhost, one per rank, each running
distributed_worker.py (which checks its own results against values computed on the CPU).

The 2-rank runs of the default configuration are the fast path; 3 ranks, the staging path, the
explicit "cpu:gloo,foo:fooccl" form and the failure test are marked slow (each process imports
torch, a few seconds on a loaded machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from foo_testing import needs_host_views

WORKER = Path(__file__).resolve().parent / "distributed_worker.py"
RUN_TIMEOUT_S = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(
    scenario: str, world: int, *, backend: str | None = None, memory: str | None = None,
    timeout_s: float = 60, extra_env: dict[str, str] | None = None,
) -> list[subprocess.CompletedProcess[str]]:
    """Run `world` ranks of `scenario`; return each rank's result (killed if they hang)."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            FOO_TEST_BACKEND=backend or "",
            FOO_TEST_MEMORY=memory or "",
            FOO_TEST_TIMEOUT=str(timeout_s),
            OMP_NUM_THREADS="1",
        )
        env.update(extra_env or {})
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), scenario],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = []
    deadline = time.monotonic() + RUN_TIMEOUT_S
    for rank, proc in enumerate(procs):
        try:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            out, err = proc.communicate()
            pytest.fail(f"rank {rank} of {scenario} hung (killed after {RUN_TIMEOUT_S}s):\n{err}")
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def assert_all_ok(results: list[subprocess.CompletedProcess[str]], scenario: str) -> None:
    for rank, r in enumerate(results):
        assert r.returncode == 0 and f"OK {scenario} rank {rank}" in r.stdout, (
            f"rank {rank} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
        )


def test_the_device_has_a_default_backend() -> None:
    assert dist.Backend.default_device_backend_map["foo"] == "fooccl"
    assert dist.Backend.backend_capability["fooccl"] == ["cpu", "foo"]


@needs_host_views
def test_host_view_aliases_device_memory() -> None:
    """The op the backend gives Gloo: a CPU tensor over the device tensor's memory (sizes,
    strides, offset kept), writes through it land on the device."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6).to("foo")
    view = base[1:3, 2:5]
    host = torch.ops.scaffold_runtime.host_view(view)
    assert host.device.type == "cpu"
    assert (host.shape, host.stride(), host.storage_offset()) == (
        view.shape, view.stride(), view.storage_offset()
    )
    assert torch.equal(host, view.cpu())
    host.fill_(-1)
    expected = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    expected[1:3, 2:5] = -1
    assert torch.equal(base.cpu(), expected)


def test_collectives_2_ranks() -> None:
    assert_all_ok(launch("collectives", 2), "collectives")


@pytest.mark.skipif(
    os.environ.get("SCAFFOLD_LAUNCH_BLOCKING") == "1",
    reason="proves asynchrony: with SCAFFOLD_LAUNCH_BLOCKING=1 every stream is synchronous and wait() blocks",
)
@needs_host_views  # the gating of the host_view path; staging copies wait for the stream
def test_work_wait_gates_the_stream_without_blocking_the_host() -> None:
    assert_all_ok(launch("wait_gates_the_stream", 2), "wait_gates_the_stream")


@pytest.mark.slow
def test_collectives_3_ranks() -> None:
    assert_all_ok(launch("collectives", 3), "collectives")


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 3])
def test_collectives_staging_through_pinned_memory(world: int) -> None:
    """The path of a device whose memory the host cannot address."""
    assert_all_ok(launch("collectives", world, memory="staging"), "collectives")


@pytest.mark.slow
def test_collectives_with_explicit_device_backend_map() -> None:
    assert_all_ok(launch("collectives", 2, backend="cpu:gloo,foo:fooccl"), "collectives")


def test_ddp_matches_single_process_training() -> None:
    assert_all_ok(launch("ddp", 2), "ddp")


def test_fsdp_matches_single_process_training() -> None:
    assert_all_ok(launch("fsdp", 2), "fsdp")


@pytest.mark.slow
def test_fsdp_3_ranks_staging() -> None:
    assert_all_ok(launch("fsdp", 3, memory="staging"), "fsdp")


@pytest.mark.slow
def test_ddp_3_ranks_staging() -> None:
    assert_all_ok(launch("ddp", 3, memory="staging"), "ddp")


SLOW_GIL_SHIM = Path(__file__).resolve().parent / "slow_gil_handoff.c"


@pytest.fixture(scope="module")
def slow_gil_shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """slow_gil_handoff.c built as a shared library, for LD_PRELOAD."""
    if sys.platform != "linux" or not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("the shim interposes libpython's GIL functions: needs Linux and a shared libpython")
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the shim")
    library = tmp_path_factory.mktemp("slow_gil") / "libslow_gil_handoff.so"
    subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", str(SLOW_GIL_SHIM), "-o", str(library), "-ldl"],
        check=True,
    )
    return library


@pytest.mark.parametrize(
    ("scenario", "delay_ms"),
    [
        ("ddp", 10),  # the engine's thread drops a Python callback after the caller went on
        pytest.param("fsdp", 5, marks=pytest.mark.slow),  # ... and frees the last of a work
    ],
)
def test_ranks_end_cleanly_when_engine_threads_are_slow_to_take_the_gil(
    slow_gil_shim: Path, scenario: str, delay_ms: int
) -> None:
    """Every thread but the main one waits before it takes the GIL, so the engine's threads
    still need Python after the program's last line, unless the backend waits for them at
    destroy_process_group and at exit. Without that wait a rank aborts after printing OK:
    "terminate called without an active exception" (a thread ended by the interpreter's
    finalization while waiting for the GIL)."""
    results = launch(
        scenario,
        2,
        extra_env={"LD_PRELOAD": str(slow_gil_shim), "SCAFFOLD_TEST_SLOW_GIL_MS": str(delay_ms)},
    )
    assert_all_ok(results, scenario)
    for rank, r in enumerate(results):
        report = r.stderr.partition("slow-gil shim: ")[2].split()
        assert report and int(report[0]) > 0, f"rank {rank}: the shim delayed nothing\n{r.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 3])
def test_a_dead_rank_fails_the_others_with_an_error(world: int) -> None:
    """Each survivor fails with the engine's error, soon: raised by all_reduce when the failure
    is known by the time its work is waited on, otherwise (the work's wait() only gated the
    stream, as with NCCL) by aborting the process when it comes, as NCCL's async error
    handling does."""
    started = time.monotonic()
    results = launch("rank_dies", world, timeout_s=20)
    elapsed = time.monotonic() - started
    assert results[-1].returncode == 3
    for rank, r in enumerate(results[:-1]):
        report = f"rank {rank} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
        if r.returncode == 0:
            assert "FAILED after" in r.stdout, report
            seconds = float(r.stdout.split("FAILED after ")[1].split("s:")[0])
            assert seconds < 25, report
            assert "fooccl allreduce failed" in r.stdout, report
        else:
            assert r.returncode == -signal.SIGABRT, report
            assert "fooccl allreduce failed" in r.stderr, report
            assert "Work.wait() returned: aborting the process" in r.stderr, report
    assert elapsed < 120, f"the ranks took {elapsed:.0f}s"
