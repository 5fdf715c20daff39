"""The memory API of torch.cuda on foo: memory_summary, mem_get_info, max_memory_reserved,
reset_max_memory_*, set_per_process_memory_fraction, and torch.foo.memory's history and
snapshots in the format torch.cuda._memory_viz reads. Real allocations, the real _memory_viz."""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.cuda import _memory_viz

from foo_testing import foo

DEVICE = "foo"
MiB = 1 << 20


@pytest.fixture(autouse=True)
def _no_history_left_behind() -> Iterator[None]:
    yield
    foo.memory._record_memory_history(None, clear_history=True)


def _segments_holding(snapshot: dict[str, Any], tensors: list[torch.Tensor]) -> list[dict[str, Any]]:
    addresses = {t.untyped_storage().data_ptr() for t in tensors}
    return [
        seg for seg in snapshot["segments"]
        if any(b["address"] in addresses for b in seg["blocks"])
    ]


def _allocate_in(function_name: str, count: int, nbytes: int, device: str) -> list[torch.Tensor]:
    """A function of its own, so its name is in the allocations' stacks."""
    return [torch.empty(nbytes, dtype=torch.uint8, device=device) for _ in range(count)]


def make_fragments(device: str) -> list[torch.Tensor]:
    # Six 3 MiB blocks fill one 20 MiB segment; freeing every other one leaves 3 MiB holes that a
    # 6 MiB request cannot use.
    blocks = _allocate_in("make_fragments", 6, 3 * MiB, device)
    kept = blocks[1::2]
    del blocks
    return kept


def fresh_stream(device: int) -> Any:
    """A stream no other test allocated on: its segments are this test's alone."""
    return foo.stream(foo.Stream(device))


# ---- Statistics -------------------------------------------------------------------------------


def test_memory_summary_mem_get_info_and_peaks() -> None:
    foo.empty_cache()
    foo.reset_peak_memory_stats()
    x = torch.empty(5 * MiB, dtype=torch.uint8, device=DEVICE)
    free, total = foo.mem_get_info()
    assert total == foo.get_memory_capacity()
    assert free == total - foo.memory_reserved()
    assert (free, total) == foo.memory.mem_get_info(0)
    assert foo.max_memory_reserved() >= foo.memory_reserved() >= 5 * MiB

    summary = foo.memory_summary()
    assert "PyTorch foo memory summary, device ID 0" in summary
    for row in ("Allocated memory", "Requested memory", "foo reserved memory", "Non-releasable memory",
                "Allocations", "foo reserved segments"):
        assert re.search(rf"^ {row} +\|", summary, re.MULTILINE), row
    assert "Requested memory" not in foo.memory_summary(abbreviated=True)

    peak = foo.max_memory_allocated()
    del x
    foo.reset_max_memory_allocated()
    assert foo.max_memory_allocated() < peak
    foo.empty_cache()
    foo.reset_max_memory_cached()
    assert foo.max_memory_reserved() == foo.memory_reserved()
    foo.reset_accumulated_memory_stats()
    assert foo.memory_stats()["alloc_requests"] == 0


def test_set_per_process_memory_fraction_caps_allocations() -> None:
    total = foo.get_device_properties().total_memory
    foo.set_per_process_memory_fraction(0.5)
    assert foo.get_memory_capacity() == int(0.5 * total)
    assert foo.get_per_process_memory_fraction() == pytest.approx(0.5)
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(int(0.6 * total), dtype=torch.uint8, device=DEVICE)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        foo.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError):
        foo.set_per_process_memory_fraction("half")


# ---- Out of memory ------------------------------------------------------------------------------


def test_a_cap_below_the_cache_releases_the_cache_first() -> None:
    foo.empty_cache()
    big = torch.empty(30 * MiB, dtype=torch.uint8, device="foo:1")
    del big  # cached: reserved, not allocated
    assert foo.memory_reserved(1) >= 30 * MiB
    foo.set_memory_capacity(foo.memory_reserved(1) - MiB, 1)
    assert foo.memory_reserved(1) < 30 * MiB
    assert torch.ones(1024, device="foo:1").sum().item() == 1024


def test_an_oom_under_a_cap_below_what_live_tensors_hold_says_why() -> None:
    foo.empty_cache()
    foo.memory._record_memory_history(stacks="python")
    # Two 20 MiB segments, each kept by live tensors: nothing can be released.
    keep = _allocate_in("keep", 8, 3 * MiB, "foo:1")[1::2]
    foo.set_memory_capacity(8 * MiB, 1)
    for attempt in ("first", "after empty_cache"):
        with pytest.raises(torch.OutOfMemoryError) as info:
            torch.empty(4096, dtype=torch.uint8, device="foo:1")
        foo.empty_cache()
        message = str(info.value)
        assert "foo:1" in message and "(4096 bytes)" in message, attempt
        assert "capacity is below what the allocator already holds" in message
        assert "hold live tensors, so they cannot be given back" in message
        assert "free but lies inside segments that hold live tensors (fragmentation)" in message
        assert "torch.foo.memory._record_memory_history()" in message
        assert 'torch.foo.memory._dump_snapshot("snapshot.pickle")' in message
    (oom, *_) = [e for e in foo.memory._snapshot()["device_traces"][1] if e["action"] == "oom"]
    assert oom["size"] == 4096 and oom["device_free"] == 0
    del keep


# ---- History and snapshots ---------------------------------------------------------------------


def test_a_snapshot_has_cudas_format_and_python_stacks(tmp_path: Path) -> None:
    foo.memory._record_memory_history(stacks="python", clear_history=True)
    with fresh_stream(1):
        stream = foo.current_stream(1).stream_id
        kept = make_fragments("foo:1")
    snapshot = foo.memory._snapshot()
    assert set(snapshot) >= {"segments", "device_traces"}
    assert len(snapshot["device_traces"]) == foo.device_count()

    (segment,) = _segments_holding(snapshot, kept)
    assert segment["device"] == 1 and segment["segment_type"] == "large" and segment["stream"] == stream
    assert segment["total_size"] == 20 * MiB == sum(b["size"] for b in segment["blocks"])
    assert segment["allocated_size"] == segment["active_size"] == segment["requested_size"] == 9 * MiB
    states = [b["state"] for b in segment["blocks"]]
    assert states[:6] == ["inactive", "active_allocated"] * 3
    for block in segment["blocks"]:
        if block["state"] == "active_allocated":
            assert block["requested_size"] == 3 * MiB
            names = [f["name"] for f in block["frames"]]
            assert {"_allocate_in", "make_fragments", "test_a_snapshot_has_cudas_format_and_python_stacks"} <= {
                *names
            }
            assert all(f["filename"] == __file__ for f in block["frames"][:3])
        else:
            assert block["frames"] == []

    trace = [e for e in snapshot["device_traces"][1] if e["stream"] == stream or e["action"] == "snapshot"]
    actions = [e["action"] for e in trace]
    assert actions[:2] == ["segment_alloc", "alloc"] and actions.count("alloc") == 6
    assert actions.count("free_requested") == actions.count("free_completed") == 3
    assert actions[-1] == "snapshot"
    frees = [e for e in trace if e["action"] == "free_requested"]
    assert all(any(f["name"] == "make_fragments" for f in e["frames"]) for e in frees)  # context="all"

    path = tmp_path / "snapshot.pickle"
    foo.memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        loaded = pickle.load(f)
    assert _segments_holding(loaded, kept)[0]["blocks"] == segment["blocks"]


def test_memory_viz_reads_a_snapshot_and_shows_the_fragmentation() -> None:
    foo.memory._record_memory_history(stacks="python")
    with fresh_stream(1):
        kept = make_fragments("foo:1")
        more = torch.empty(6 * MiB, dtype=torch.uint8, device="foo:1")  # fits no hole: a new segment
    full = foo.memory._snapshot()
    ours = _segments_holding(full, [*kept, more])
    snapshot = {"segments": ours, "device_traces": full["device_traces"]}
    assert len(ours) == 2

    # (_memory_viz's renderers have no annotations: each call below says so to mypy, as the runtime's do.)
    # segsum: both segments 20 MiB; the fragmented one has 11 MiB free around its 9 MiB of tensors.
    summary = _memory_viz.segsum(snapshot)  # type: ignore[no-untyped-call]
    assert "segments: 2" in summary and "total_allocated: 15.0MiB" in summary, summary
    assert "20.0MiB allocated, 11.0MiB (0.0% internal) free" in summary, summary
    assert "20.0MiB allocated, 14.0MiB (0.0% internal) free" in summary, summary

    def lines(text: str) -> str:
        return text  # the flame graph's input lines, instead of running flamegraph.pl

    by_stack = _memory_viz.memory(snapshot, format_flamegraph=lines)  # type: ignore[no-untyped-call]
    assert re.search(r";active_allocated;.*make_fragments.* 3145728$", by_stack, re.MULTILINE), by_stack
    by_segment = _memory_viz.segments(snapshot, format_flamegraph=lines)  # type: ignore[no-untyped-call]
    holes = re.findall(r"^stream_\d+;seg_(\d+);inactive;<gaps> 3145728$", by_segment, re.MULTILINE)
    assert len(holes) == 3 and len(set(holes)) == 1  # three 3 MiB holes in one segment
    assert "alloc" in _memory_viz.trace(snapshot)  # type: ignore[no-untyped-call]
    assert "Active Memory Timeline" in _memory_viz.trace_plot(snapshot)  # type: ignore[no-untyped-call]
    assert "Active Cached Memory Timeline" in _memory_viz.trace_plot(snapshot, plot_segments=True)  # type: ignore[no-untyped-call]
    assert _memory_viz.segment_plot(snapshot)
    del more
    foo.empty_cache()
    after = _segments_holding(foo.memory._snapshot(), kept)
    assert "only_before" in _memory_viz.compare(ours, after, format_flamegraph=lines)  # type: ignore[no-untyped-call]


def test_history_settings() -> None:
    foo.memory._record_memory_history(enabled="state", stacks="python")
    x = _allocate_in("state_only", 1, 1000, DEVICE)
    snapshot = foo.memory._snapshot()
    (block,) = [b for seg in _segments_holding(snapshot, x) for b in seg["blocks"]
                if b["address"] == x[0].data_ptr()]
    assert any(f["name"] == "test_history_settings" for f in block["frames"])
    assert snapshot["device_traces"][0] == []  # "state": no trace

    foo.memory._record_memory_history(context=None, clear_history=True)
    y = torch.empty(100, device=DEVICE)
    (block,) = [b for seg in _segments_holding(foo.memory._snapshot(), [y]) for b in seg["blocks"]
                if b["address"] == y.data_ptr()]
    assert block["frames"] == []  # no stacks, but a trace
    trace = foo.memory._snapshot()["device_traces"][0]
    assert any(e["action"] == "alloc" and e["addr"] == y.data_ptr() for e in trace)

    foo.memory._record_memory_history(max_entries=4, clear_history=True, stacks="python")
    _allocate_in("many", 10, 100, DEVICE)
    trace = foo.memory._snapshot()["device_traces"][0]
    assert len(trace) == 4 and trace[-1]["action"] == "snapshot"  # the newest four

    foo.memory._record_memory_history(skip_actions=["free_requested"], clear_history=True, stacks="python")
    del y
    assert {e["action"] for e in foo.memory._snapshot()["device_traces"][0]} == {"free_completed", "snapshot"}

    for bad in ({"enabled": "yes"}, {"context": "some"}, {"stacks": "cpp"}, {"skip_actions": ["allocate"]}):
        with pytest.raises(ValueError):
            foo.memory._record_memory_history(**bad)
    with pytest.raises(NotImplementedError):
        foo.memory._record_memory_history(compile_context=True)


def test_cpp_stacks() -> None:
    foo.memory._record_memory_history(stacks="all")
    x = torch.empty(100, device=DEVICE)
    (block,) = [b for seg in _segments_holding(foo.memory._snapshot(), [x]) for b in seg["blocks"]
                if b["address"] == x.data_ptr()]
    names = [f["name"] for f in block["frames"]]
    assert "test_cpp_stacks" in names  # Python frames
    assert any("at::" in name or "c10::" in name for name in names)  # and libtorch's C++ frames


def test_frees_on_a_stream_worker_are_recorded() -> None:
    """A temporary whose last reference is a launched kernel's is freed by the stream's worker, which
    gathers no Python frames (the GIL may be held by a thread waiting for it) and does not deadlock."""
    foo.memory._record_memory_history(stacks="python")
    x = torch.randn(1 << 16, device=DEVICE)
    foo.synchronize()
    s = foo.Stream()
    with foo.stream(s):
        for _ in range(20):
            (x * 2).sum()
    foo.synchronize()
    trace = foo.memory._snapshot()["device_traces"][0]
    frees = [e for e in trace if (e["action"], e["size"], e["stream"]) == ("free_completed", 1 << 18, s.stream_id)]
    assert len(frees) == 20
