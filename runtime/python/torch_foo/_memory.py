"""The memory API of ``torch.cuda`` on ``torch.<device>`` (device-name agnostic).

``add_memory_api`` adds to the device module what ``torch.cuda`` users reach for when a model
runs out of memory -- ``memory_summary()``, ``mem_get_info()``, ``max_memory_reserved()``, the
``reset_max_memory_*`` functions, ``set_per_process_memory_fraction()`` -- and the
``torch.<device>.memory`` module with them and the memory history:
``_record_memory_history()`` / ``_snapshot()`` / ``_dump_snapshot()``, whose snapshots have the
format of ``torch.cuda.memory._snapshot()`` (segments, blocks, device traces, frames), so
``torch.cuda._memory_viz`` and https://pytorch.org/memory_viz read them.

The caching allocator behind it is ``csrc/memory/allocator.cpp``; the history and the snapshot's
stacks are ``csrc/memory/memory_history.cpp``.
"""

from __future__ import annotations

import pickle
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

_ENABLED = (None, "state", "all")
_CONTEXTS = (None, "state", "alloc", "all")
_STACKS = ("python", "all")
_ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom", "snapshot")


def add_memory_api(mod: types.ModuleType, name: str, c: Any, index: Callable[[Any], int]) -> None:
    """Add the memory API to the device module ``mod`` and register ``torch.<name>.memory``."""
    skipped_actions: set[str] = set()

    def max_memory_reserved(device: Any = None) -> int:
        """The most memory the allocator has held (segments mapped), since start or the last reset."""
        return int(c.memory_stats(index(device))["reserved_bytes_peak"])

    def reset_max_memory_allocated(device: Any = None) -> None:
        """Reset the peaks (as ``torch.cuda.reset_max_memory_allocated``: all of them)."""
        c.reset_peak_memory_stats(index(device))

    def reset_max_memory_cached(device: Any = None) -> None:
        c.reset_peak_memory_stats(index(device))

    def reset_accumulated_memory_stats(device: Any = None) -> None:
        """Reset the cumulative counters (allocation requests, bytes allocated and freed, ...)."""
        torch.accelerator.reset_accumulated_memory_stats(index(device))

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        """``(free, total)`` bytes: what the device could still map, and its capacity.

        As with CUDA, memory the caching allocator holds counts as used; the capacity is the
        device's size unless lowered (``set_per_process_memory_fraction``, ``set_memory_capacity``).
        """
        stats = c.memory_stats(index(device))
        capacity, reserved = int(stats["capacity_bytes"]), int(stats["reserved_bytes"])
        return max(capacity - reserved, 0), capacity

    def _total_memory(device: Any) -> int:
        return int(c.get_device_properties(index(device))[1])

    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        """Let this process use at most ``fraction`` of the device's memory.

        Allocating beyond it raises ``torch.OutOfMemoryError``; memory already cached above it is
        released (memory held by live tensors cannot be)."""
        if not isinstance(fraction, float | int) or isinstance(fraction, bool):
            raise TypeError(f"Invalid type for fraction argument, must be `float`, got {type(fraction).__name__}")
        if not 0 <= fraction <= 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        c.set_memory_capacity(index(device), int(fraction * _total_memory(device)))

    def get_per_process_memory_fraction(device: Any = None) -> float:
        return float(c.get_memory_capacity(index(device))) / _total_memory(device)

    def _record_memory_history(
        enabled: str | bool | None = "all",
        context: str | None = "all",
        stacks: str = "all",
        max_entries: int = sys.maxsize,
        device: Any = None,
        clear_history: bool = False,
        compile_context: bool = False,
        global_record_annotations: bool = False,
        skip_actions: list[str] | None = None,
    ) -> None:
        """Record the stack of every allocation, and a history of the allocator's actions, for
        :func:`_snapshot` -- as ``torch.cuda.memory._record_memory_history``.

        ``enabled``: ``None`` stops recording, ``"state"`` keeps the stacks of live allocations,
        ``"all"`` also a history of allocations, frees, segments mapped and released, and
        out-of-memory errors (at most ``max_entries`` per device, the newest kept).
        ``context``: which stacks to keep (``None``, ``"state"``, ``"alloc"``, ``"all"``), at
        most what ``enabled`` records. ``stacks``: ``"python"`` frames, or ``"all"`` with C++
        frames too (symbolizing those makes snapshots slower). Every device is recorded
        (``device`` is accepted for compatibility).
        """
        if isinstance(enabled, bool):  # the legacy form: _record_memory_history(True)
            enabled = "all" if enabled else None
        if enabled not in _ENABLED:
            raise ValueError(f"enabled must be one of {_ENABLED}, got {enabled!r}")
        if context not in _CONTEXTS:
            raise ValueError(f"context must be one of {_CONTEXTS}, got {context!r}")
        if stacks not in _STACKS:
            raise ValueError(f"stacks must be one of {_STACKS}, got {stacks!r}")
        if not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError(f"max_entries must be a non-negative integer, got {max_entries!r}")
        unknown = sorted(set(skip_actions or ()) - set(_ACTIONS))
        if unknown:
            raise ValueError(f"skip_actions: unknown action(s) {unknown}; valid: {list(_ACTIONS)}")
        if compile_context or global_record_annotations:
            raise NotImplementedError(
                f"torch.{name}.memory._record_memory_history: compile_context and "
                "global_record_annotations are not supported on this device"
            )
        if device is not None:
            index(device)  # an invalid device is still an error
        record_trace = enabled == "all"
        stacks_on = enabled is not None and context is not None
        c._record_memory_history(
            enabled is not None,
            record_trace,
            stacks_on,
            stacks_on and record_trace and context in ("alloc", "all"),
            stacks_on and record_trace and context == "all",
            stacks == "all",
            min(max_entries, 2**64 - 1),
            clear_history,
        )
        skipped_actions.clear()
        skipped_actions.update(skip_actions or ())

    def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> dict[str, Any]:
        """The allocator's state: ``{"segments": [...], "device_traces": [[...], ...]}``, in the
        format of ``torch.cuda.memory._snapshot()``, for every device."""
        if augment_with_fx_traces:
            raise NotImplementedError(f"torch.{name}.memory._snapshot: augment_with_fx_traces is not supported")
        snapshot: dict[str, Any] = c._memory_snapshot()
        if skipped_actions:
            snapshot["device_traces"] = [
                [entry for entry in trace if entry["action"] not in skipped_actions]
                for trace in snapshot["device_traces"]
            ]
        return snapshot

    def _dump_snapshot(filename: str = "dump_snapshot.pickle", augment_with_fx_traces: bool = False) -> None:
        """Pickle :func:`_snapshot` to ``filename``, for https://pytorch.org/memory_viz or
        ``python -m torch.cuda._memory_viz``."""
        snapshot = _snapshot(augment_with_fx_traces=augment_with_fx_traces)
        with open(filename, "wb") as f:
            pickle.dump(snapshot, f)

    def _save_segment_usage(filename: str = "output.svg", snapshot: dict[str, Any] | None = None) -> None:
        from torch.cuda import _memory_viz

        with open(filename, "w") as f:
            f.write(_memory_viz.segments(snapshot if snapshot is not None else _snapshot()))  # type: ignore[no-untyped-call]

    def _save_memory_usage(filename: str = "output.svg", snapshot: dict[str, Any] | None = None) -> None:
        from torch.cuda import _memory_viz

        with open(filename, "w") as f:
            f.write(_memory_viz.memory(snapshot if snapshot is not None else _snapshot()))  # type: ignore[no-untyped-call]

    def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
        """A readable table of the allocator's statistics (as ``torch.cuda.memory_summary``), with
        what a snapshot adds: memory free inside segments that live tensors keep (which
        ``empty_cache()`` cannot release)."""
        i = index(device)
        segments = c._memory_snapshot(False)["segments"]  # False: not an entry of the history
        return _format_summary(name, i, c.memory_stats(i), segments, abbreviated)

    public = (
        memory_summary, mem_get_info, max_memory_reserved, reset_max_memory_allocated,
        reset_max_memory_cached, reset_accumulated_memory_stats, set_per_process_memory_fraction,
        get_per_process_memory_fraction,
    )
    private = (_record_memory_history, _snapshot, _dump_snapshot, _save_segment_usage, _save_memory_usage)
    memory = types.ModuleType(f"torch.{name}.memory", f"Memory management of the '{name}' device.")
    for function in public:
        function.__module__ = mod.__name__
        setattr(mod, function.__name__, function)
    for private_function in private:
        private_function.__module__ = memory.__name__
        setattr(memory, private_function.__name__, private_function)
    for attribute in (
        *(fn.__name__ for fn in public),
        "memory_allocated", "memory_reserved", "max_memory_allocated", "memory_stats", "reset_peak_memory_stats",
        "empty_cache", "set_memory_capacity", "get_memory_capacity",
    ):
        setattr(memory, attribute, getattr(mod, attribute))
    setattr(mod, "memory", memory)  # noqa: B010  (a module attribute made at run time)
    sys.modules[memory.__name__] = memory


def _format_summary(
    name: str, device: int, stats: dict[str, int], segments: list[dict[str, Any]], abbreviated: bool
) -> str:
    """The table of ``torch.cuda.memory_summary``, for this allocator's statistics."""
    # Free blocks inside segments that hold live blocks: what empty_cache() cannot release.
    split_bytes = split_blocks = 0
    for seg in segments:
        if seg["device"] != device or not any(b["state"] != "inactive" for b in seg["blocks"]):
            continue
        for block in seg["blocks"]:
            if block["state"] == "inactive":
                split_bytes += block["size"]
                split_blocks += 1

    def size(n: int | None) -> str:
        if n is None:
            return f"{'-':>10}"
        for unit in ("B  ", "KiB", "MiB", "GiB"):
            if n < 768 * 1024 or unit == "GiB":
                return f"{n:6d} {unit}"
            n //= 1024
        raise AssertionError("unreachable")

    def count(n: int | None) -> str:
        return f"{'-':>10}" if n is None else f"{n:9d} "

    rows: list[tuple[str, Callable[[int | None], str], tuple[int | None, ...]]] = [
        ("Allocated memory", size, (stats["allocated_bytes"], stats["peak_allocated_bytes"],
                                    stats["allocated_bytes_total"], stats["freed_bytes_total"])),
        ("Requested memory", size, (stats["requested_bytes"], stats["requested_bytes_peak"],
                                    stats["requested_bytes_total"], stats["requested_freed_total"])),
        (f"{name} reserved memory", size, (stats["reserved_bytes"], stats["reserved_bytes_peak"], None, None)),
        ("Non-releasable memory", size, (split_bytes, None, None, None)),
        ("Allocations", count, (stats["active_blocks"], stats["active_blocks_peak"], stats["alloc_requests"],
                                stats["alloc_requests"] - stats["active_blocks"])),
        (f"{name} reserved segments", count, (stats["segments"], stats["segments_peak"], stats["segment_maps"],
                                              stats["segment_unmaps"])),
        ("Non-releasable allocs", count, (split_blocks, None, None, None)),
    ]
    if abbreviated:
        rows = [row for row in rows if not row[0].startswith("Requested")]
    capacity = stats["capacity_bytes"]
    free = max(capacity - stats["reserved_bytes"], 0)
    lines = [
        "=" * 75,
        f" PyTorch {name} memory summary, device ID {device}".ljust(75),
        "-" * 75,
        f" {name} OOMs: {stats['oom_count']:<8d} | capacity: {size(capacity).strip():>12} | free to map: "
        f"{size(free).strip()}",
        "=" * 75,
        "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
    ]
    for title, fmt, values in rows:
        lines.append("-" * 75)
        lines.append(f" {title:<21} | " + " | ".join(fmt(v) for v in values) + " ")
    lines.append("=" * 75)
    lines.append(
        f" Non-releasable: free inside segments that live tensors keep (empty_cache() cannot release it; "
        f"torch.{name}.memory._snapshot() shows which)."
    )
    return "\n".join(lines) + "\n"

