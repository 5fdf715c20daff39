"""Streams and events of foo: work enqueued on a stream runs asynchronously, in order, on the
driver's worker thread for that stream, and only synchronisation (stream/event waits, pageable
copies, host reads) orders it with the host and with other streams. (Tensors a test hands to a side
stream are made by pageable copies, which complete before returning: torch.zeros(device="foo")
launches its fill on the current stream, which a side stream does not wait for.)

Asynchrony is shown without timing: the driver's test hook pauses a stream (it queues work but
runs none), so "not done yet" is certain while paused, and "done" follows only from resuming.
Where a call must *block* until a paused stream resumes, it runs in a thread, and the test checks
that the thread is still waiting before resuming the stream (if the call wrongly returned early the
check fails; if it waits, as it must, the check is certain to pass).
"""

from __future__ import annotations

import threading

import pytest
import torch

from foo_testing import assert_still_waiting, blocked_call, foo, needs_host_views, paused, run_with_launch_blocking

# Paused streams hold launched kernels back; where foo's kernels decline, their ops run on the CPU
# after a synchronisation, which a paused stream holds back for good.
pytestmark = needs_host_views

pytestmark = pytest.mark.skipif(
    foo.launch_blocking(), reason="SCAFFOLD_LAUNCH_BLOCKING=1 runs every stream synchronously"
)

N = 4096


def pinned_arange(n: int = N) -> torch.Tensor:
    return torch.arange(n, dtype=torch.float32).pin_memory()


def test_non_blocking_copy_from_pinned_memory_is_asynchronous() -> None:
    src = pinned_arange()
    dst = torch.zeros(N).to("foo")
    s = foo.Stream()
    done = foo.Event()
    with paused(s):
        with foo.stream(s):
            dst.copy_(src, non_blocking=True)
            done.record()
        assert not s.query()
        assert not done.query()
    assert s.query() and done.query()
    torch.testing.assert_close(dst.cpu(), src)


def test_copy_from_pageable_memory_waits_for_the_stream() -> None:
    src = torch.arange(N, dtype=torch.float32)  # pageable: copies synchronise, as in CUDA
    dst = torch.zeros(N).to("foo")
    s: torch.Stream = foo.Stream()

    def copy() -> bool:
        with foo.stream(s):
            dst.copy_(src, non_blocking=True)
        return s.query()

    with paused(s):
        thread, result = blocked_call(copy)
        assert_still_waiting(thread)
    thread.join()
    assert result == [True]
    torch.testing.assert_close(dst.cpu(), src)


def test_copy_to_pageable_memory_waits_even_when_non_blocking() -> None:
    # As in CUDA: only pinned memory makes a copy to the host asynchronous (test_launch.py).
    x = torch.arange(N, dtype=torch.float32, device="foo")
    host = torch.zeros(N)
    s = foo.Stream()

    def copy() -> float:
        with foo.stream(s):
            host.copy_(x, non_blocking=True)
        return host[-1].item()

    with paused(s):
        thread, result = blocked_call(copy)
        assert_still_waiting(thread)
    thread.join()
    assert result == [float(N - 1)]


def test_event_orders_work_on_two_streams() -> None:
    src = pinned_arange()
    a = torch.zeros(N).to("foo")
    b = torch.zeros(N).to("foo")
    producer, consumer = foo.Stream(), foo.Stream()
    with paused(producer):
        with foo.stream(producer):
            a.copy_(src, non_blocking=True)
            written = foo.Event()
            written.record()
        consumer.wait_event(written)
        with foo.stream(consumer):
            b.copy_(a)  # device to device: enqueued on the consumer
        assert not consumer.query()  # held back by the event, not by the host
    consumer.synchronize()
    torch.testing.assert_close(b.cpu(), src)


def test_without_the_event_the_consumer_does_not_wait() -> None:
    # The control for the test above: the ordering comes from wait_event alone.
    src = pinned_arange()
    a = torch.zeros(N).to("foo")
    b = torch.full((N,), -1.0).to("foo")
    producer, consumer = foo.Stream(), foo.Stream()
    with paused(producer):
        with foo.stream(producer):
            a.copy_(src, non_blocking=True)
        with foo.stream(consumer):
            b.copy_(a)
        consumer.synchronize()
        assert b.cpu().abs().sum().item() == 0  # copied a before the producer wrote it


def test_each_thread_synchronizing_wakes_when_its_own_work_is_done() -> None:
    # The worker wakes sleeping synchronize() calls only when its completions reach the lowest
    # point one of them waits for; one waiting for less than another must not wait for both.
    x = torch.zeros(N).to("foo")
    s, held = foo.Stream(), foo.Stream()
    with paused(held):
        foo._pause_stream_for_testing(s, True)
        try:  # not paused(s): resuming it waits for all of s, the work held back included
            with foo.stream(s):
                x.add_(1)
            first, first_result = blocked_call(s.synchronize)
            assert_still_waiting(first)
            with foo.stream(held):
                released = foo.Event()
                released.record()
            s.wait_event(released)  # s's worker stops here until `held` runs
            with foo.stream(s):
                x.add_(1)
            second, second_result = blocked_call(s.synchronize)
            assert_still_waiting(second)
        finally:
            foo._pause_stream_for_testing(s, False)
        first.join(timeout=10)  # the first add is done, the wait still pending
        assert not first.is_alive(), "a synchronize waited for work queued after it"
        assert_still_waiting(second)
    second.join(timeout=10)
    assert not second.is_alive()
    assert first_result == [None] and second_result == [None]
    assert x.cpu().eq(2).all()


def test_item_waits_for_queued_work() -> None:
    src = pinned_arange()
    x = torch.zeros(N).to("foo")
    s = foo.Stream()

    def last() -> float:
        with foo.stream(s):
            return x[-1].item()

    with paused(s):
        with foo.stream(s):
            x.copy_(src, non_blocking=True)
        thread, result = blocked_call(last)
        assert_still_waiting(thread)
    thread.join()
    assert result == [float(N - 1)]


def test_kernels_run_after_queued_work_on_their_stream() -> None:
    src = pinned_arange()
    x = torch.zeros(N).to("foo")
    s = foo.Stream()
    with foo.stream(s):
        x.copy_(src, non_blocking=True)
        y = x * 2  # must see the copy
    # y was made on s: the current stream waits for s before reading it, as CUDA code must.
    foo.current_stream().wait_stream(s)
    torch.testing.assert_close(y.cpu(), src * 2)


# An unusual size, so no block freed by earlier tests fits better.
ODD = 10007


def test_record_stream_keeps_memory_from_reuse_until_the_stream_is_done() -> None:
    src = pinned_arange(ODD)
    s = foo.Stream()
    x = torch.empty(ODD, device="foo")
    address = x.data_ptr()
    with paused(s):
        with foo.stream(s):
            x.copy_(src, non_blocking=True)  # still pending on s
        x.record_stream(s)
        del x
        y = torch.empty(ODD, device="foo")
        assert y.data_ptr() != address  # reusing it would race with the pending copy
    z = torch.empty(ODD, device="foo")  # s is done: the block is free again
    assert z.data_ptr() == address


def test_freed_memory_is_reused_on_its_own_stream() -> None:
    # The control for the test above: without record_stream the block comes straight back.
    x = torch.empty(ODD, device="foo")
    address = x.data_ptr()
    del x
    assert torch.empty(ODD, device="foo").data_ptr() == address


def test_two_devices_each_with_a_stream() -> None:
    if foo.device_count() < 2:
        pytest.skip("needs two devices")
    src = pinned_arange()
    tripled = (src * 3).pin_memory()
    s0, s1 = foo.Stream(0), foo.Stream(1)
    x0 = torch.zeros(N).to("foo:0")
    x1 = torch.zeros(N).to("foo:1")
    with paused(s0, s1):
        with foo.stream(s0):
            x0.copy_(src, non_blocking=True)
        with foo.stream(s1):
            x1.copy_(tripled, non_blocking=True)
        assert not s0.query() and not s1.query()
    torch.testing.assert_close(x0.cpu(), src)
    torch.testing.assert_close(x1.cpu(), src * 3)
    # A copy between devices waits for the source device's current stream.
    with foo.stream(s0):
        x0.add_(1)
        moved = x0.to("foo:1")
    torch.testing.assert_close(moved.cpu(), src + 1)


def test_threads_have_their_own_current_stream() -> None:
    main_stream = foo.current_stream()
    barrier = threading.Barrier(2)
    seen: dict[int, tuple[int, int]] = {}
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            s = foo.Stream()
            with foo.stream(s):
                barrier.wait()  # both threads are inside their own stream context
                x = torch.full((N,), float(i), device="foo") + 1
                seen[i] = (foo.current_stream().stream_id, s.stream_id)
                assert x.cpu()[0].item() == i + 1
        except BaseException as error:  # noqa: BLE001  (reported by the main thread)
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert seen[0][0] == seen[0][1] and seen[1][0] == seen[1][1]
    assert seen[0][0] != seen[1][0]
    assert foo.current_stream() == main_stream


def test_stream_api_matches_torch_accelerator() -> None:
    s = foo.Stream(priority=-1)
    assert isinstance(s, torch.Stream) and s.device == torch.device("foo", foo.current_device())
    foo.set_stream(s)
    try:
        assert torch.accelerator.current_stream() == s
        assert foo.current_stream() == s
    finally:
        foo.set_stream(foo.default_stream())
    assert foo.current_stream().stream_id == 0
    start, end = foo.Event(enable_timing=True), foo.Event(enable_timing=True)
    start.record()
    torch.ones(N, device="foo").sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0


def test_torch_accelerator_memory_api() -> None:
    torch.accelerator.empty_cache()
    before = torch.accelerator.memory_allocated()
    x = torch.empty(1 << 20, dtype=torch.uint8, device="foo")
    assert torch.accelerator.memory_allocated() == before + (1 << 20)
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == before + (1 << 20)
    assert stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]
    assert torch.accelerator.max_memory_allocated() >= before + (1 << 20)
    del x
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_allocated() == before
    capability = torch.accelerator.get_device_capability()
    assert torch.float32 in capability["supported_dtypes"]
    assert foo.get_device_capability() == (1, 0)
    assert foo.get_device_properties().total_memory > 0


LAUNCH_BLOCKING = """
import torch
s = torch.foo.Stream()
src = torch.arange(1024, dtype=torch.float32).pin_memory()
dst = torch.zeros(1024, device="foo")
with torch.foo.stream(s):
    dst.copy_(src, non_blocking=True)
    done = s.query()
try:
    torch.foo._pause_stream_for_testing(s, True)
    pause = "allowed"
except RuntimeError as error:
    pause = "refused" if "LAUNCH_BLOCKING" in str(error) else str(error)
print(torch.foo.launch_blocking(), done, pause, dst.cpu().equal(src))
"""


def test_launch_blocking_runs_every_stream_synchronously() -> None:
    result = run_with_launch_blocking(LAUNCH_BLOCKING)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "refused", "True"]
