"""torch.classes.foo.TensorQueue, the reference backend's custom class (runtime/custom_classes/),
and foo::for_each_add_, the op that takes it: in eager mode on foo and CPU tensors, and under
torch.compile and torch.export through its fake class (python/torch_foo/custom_classes.py), as in
PyTorch's guide to custom classes in torch.compile/torch.export."""

from __future__ import annotations

import copy
from typing import Any, Protocol

import pytest
import torch
from torch import nn

DEVICE = "foo"
DEVICES = ("cpu", DEVICE)


class TensorQueue(Protocol):
    """The methods of torch.classes.foo.TensorQueue (a torch.ScriptObject, whose methods torch's
    stubs cannot know), as its C++ class and fake class define them."""

    def push(self, x: torch.Tensor) -> None: ...
    def pop(self) -> torch.Tensor: ...
    def size(self) -> int: ...
    def get_raw_queue(self) -> list[torch.Tensor]: ...
    def __obj_flatten__(self) -> tuple[tuple[str, Any], ...]: ...


def tensor_queue(device: str) -> TensorQueue:
    queue: TensorQueue = torch.classes.foo.TensorQueue(torch.empty(0, device=device).fill_(-1))
    return queue


def queued(tq: TensorQueue) -> list[torch.Tensor]:
    return list(tq.get_raw_queue())


class SeedMod(nn.Module):
    """Seed 000's module, verbatim. Its check, `assert torch.allclose(...)`, turns a tensor's
    values into a Python bool, which no tracer can keep in a graph: torch.compile breaks the graph
    there (so fullgraph=True refuses it) and torch.export raises, on the CPU as on foo."""

    def forward(self, tq: TensorQueue, x: torch.Tensor) -> tuple[TensorQueue, torch.Tensor]:
        tq.push(x.sin())
        tq.push(x.cos())
        popped_t = tq.pop()
        assert torch.allclose(popped_t, x.sin())
        return tq, popped_t


class Mod(nn.Module):
    """Seed 000's module with its check written as a graph op (torch._assert_async), so the whole
    forward is one graph under torch.compile(fullgraph=True) and torch.export."""

    def forward(self, tq: TensorQueue, x: torch.Tensor) -> tuple[TensorQueue, torch.Tensor]:
        tq.push(x.sin())
        tq.push(x.cos())
        popped_t = tq.pop()
        torch._assert_async(torch.isclose(popped_t, x.sin()).all())
        return tq, popped_t


class ForEachAdd(nn.Module):
    def forward(self, tq: TensorQueue, a: torch.Tensor) -> TensorQueue:
        torch.ops.foo.for_each_add_(tq, a)
        return tq


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> None:
    torch._dynamo.reset()


# ---------------------------------------------------------------------------------------------
# Eager
# ---------------------------------------------------------------------------------------------


def test_push_pop_size_on_foo_tensors() -> None:
    tq = tensor_queue(DEVICE)
    a, b = torch.randn(2, 3, device=DEVICE), torch.arange(4.0).to(DEVICE)
    assert tq.size() == 0
    tq.push(a)
    tq.push(b)
    assert tq.size() == 2
    raw = queued(tq)
    assert [t.device.type for t in raw] == [DEVICE, DEVICE]
    assert raw[0].data_ptr() == a.data_ptr() and raw[1].data_ptr() == b.data_ptr()  # not copies
    first = tq.pop()
    assert first.device.type == DEVICE and first.data_ptr() == a.data_ptr()
    torch.testing.assert_close(first.cpu(), a.cpu())
    assert tq.size() == 1
    torch.testing.assert_close(tq.pop().cpu(), torch.arange(4.0))
    assert tq.size() == 0
    # An empty queue pops its init tensor.
    empty = tq.pop()
    assert empty.device.type == DEVICE and empty.shape == (0,)


def test_queue_holds_foo_and_cpu_tensors_together() -> None:
    tq = tensor_queue("cpu")
    on_device, on_cpu = torch.ones(3, device=DEVICE), torch.zeros(2)
    tq.push(on_device)
    tq.push(on_cpu)
    assert [t.device.type for t in queued(tq)] == [DEVICE, "cpu"]
    assert tq.pop().device.type == DEVICE
    assert tq.pop().device.type == "cpu"


@pytest.mark.parametrize("device", DEVICES)
def test_for_each_add_matches_the_cpu(device: str) -> None:
    values = [torch.randn(2, 3) for _ in range(3)]
    inc = torch.randn(2, 3)
    tq = tensor_queue(device)
    for value in values:
        tq.push(value.to(device, copy=True))  # the CPU values stay as they were
    torch.ops.foo.for_each_add_(tq, inc.to(device))
    got = queued(tq)
    assert [t.device.type for t in got] == [torch.device(device).type] * 3
    for value, tensor in zip(values, got, strict=True):
        torch.testing.assert_close(tensor.cpu(), value + inc)


def test_for_each_add_takes_a_cpu_scalar_on_foo_tensors() -> None:
    tq = tensor_queue(DEVICE)
    tq.push(torch.zeros(3, device=DEVICE))
    torch.ops.foo.for_each_add_(tq, torch.tensor(2.5))
    torch.testing.assert_close(tq.pop().cpu(), torch.full((3,), 2.5))


def test_for_each_add_rejects_an_inc_on_another_device() -> None:
    tq = tensor_queue("cpu")
    tq.push(torch.zeros(3))
    with pytest.raises(RuntimeError, match=r"foo::for_each_add_: queued tensor 0 is on cpu but inc is on foo:0"):
        torch.ops.foo.for_each_add_(tq, torch.ones(3, device=DEVICE))
    torch.testing.assert_close(tq.pop(), torch.zeros(3))  # untouched


def test_obj_flatten_names_the_state() -> None:
    tq = tensor_queue(DEVICE)
    x = torch.randn(2, device=DEVICE)
    tq.push(x)
    (queue_name, queue), (init_name, init) = tq.__obj_flatten__()
    assert (queue_name, init_name) == ("queue", "init_tensor_")
    assert len(queue) == 1 and queue[0].data_ptr() == x.data_ptr()
    assert init.device.type == DEVICE and init.shape == (0,)


def test_deepcopy_goes_through_the_pickled_state() -> None:
    tq = tensor_queue(DEVICE)
    tq.push(torch.arange(3.0).to(DEVICE))
    clone = copy.deepcopy(tq)
    assert clone.size() == 1
    tq.pop()
    assert clone.size() == 1  # a separate queue
    popped = clone.pop()
    assert popped.device.type == DEVICE
    torch.testing.assert_close(popped.cpu(), torch.arange(3.0))


# ---------------------------------------------------------------------------------------------
# torch.compile and torch.export (through the fake class)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_verbatim_seed_module_compiles_and_equals_eager(device: str) -> None:
    x = torch.randn(2, 3, device=device)
    eager_tq, compiled_tq = tensor_queue(device), tensor_queue(device)
    _, eager_popped = SeedMod()(eager_tq, x)
    compiled_out_tq, compiled_popped = torch.compile(SeedMod(), backend="eager")(compiled_tq, x)
    assert compiled_out_tq.size() == eager_tq.size() == 1
    assert compiled_popped.device == x.device
    torch.testing.assert_close(compiled_popped.cpu(), eager_popped.cpu())
    torch.testing.assert_close(compiled_tq.pop().cpu(), eager_tq.pop().cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_seed_module_compiles_fullgraph_and_equals_eager(device: str) -> None:
    x = torch.randn(2, 3, device=device)
    eager_tq, compiled_tq = tensor_queue(device), tensor_queue(device)
    eager_out_tq, eager_popped = Mod()(eager_tq, x)
    compiled = torch.compile(Mod(), backend="eager", fullgraph=True)
    compiled_out_tq, compiled_popped = compiled(compiled_tq, x)
    assert compiled_out_tq.size() == eager_out_tq.size() == 1
    assert compiled_popped.device == x.device
    torch.testing.assert_close(compiled_popped.cpu(), eager_popped.cpu())
    torch.testing.assert_close(compiled_tq.pop().cpu(), eager_tq.pop().cpu())  # x.cos()
    torch.testing.assert_close(compiled_popped.cpu(), x.cpu().sin())


@pytest.mark.parametrize("device", DEVICES)
def test_seed_module_exports_non_strict_and_equals_eager(device: str) -> None:
    tq = tensor_queue(device)
    exported = torch.export.export(Mod(), (tq, torch.randn(2, 3, device=device)), strict=False)
    assert tq.size() == 0  # tracing ran on the fake queue
    assert "call_torchbind" in str(exported.graph)

    x = torch.randn(2, 3, device=device)
    eager_tq, exported_tq = tensor_queue(device), tensor_queue(device)
    _, eager_popped = Mod()(eager_tq, x)
    _, exported_popped = exported.module()(exported_tq, x)
    assert exported_tq.size() == eager_tq.size() == 1
    assert exported_popped.device == x.device
    torch.testing.assert_close(exported_popped.cpu(), eager_popped.cpu())
    torch.testing.assert_close(exported_tq.pop().cpu(), eager_tq.pop().cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_for_each_add_exports_and_equals_eager(device: str) -> None:
    def filled_queue() -> TensorQueue:
        tq = tensor_queue(device)
        for i in range(10):
            tq.push(torch.full((1,), float(i), device=device))
        return tq

    traced_tq = filled_queue()
    exported = torch.export.export(ForEachAdd(), (traced_tq, torch.ones(1, device=device)), strict=False)
    assert "torch.ops.foo.for_each_add_.default" in exported.graph_module.code
    # Tracing ran the fake kernel on the fake queue: the real tensors are untouched.
    torch.testing.assert_close([t.cpu() for t in queued(traced_tq)], [torch.full((1,), float(i)) for i in range(10)])

    inc = torch.full((1,), 0.5, device=device)
    eager_tq, exported_tq = filled_queue(), filled_queue()
    ForEachAdd()(eager_tq, inc)
    exported.module()(exported_tq, inc)
    got, expected = queued(exported_tq), queued(eager_tq)
    assert [t.device.type for t in got] == [torch.device(device).type] * 10
    torch.testing.assert_close([t.cpu() for t in got], [t.cpu() for t in expected])
    torch.testing.assert_close([t.cpu() for t in got], [torch.full((1,), i + 0.5) for i in range(10)])


def test_for_each_add_compiles_fullgraph_on_foo() -> None:
    tq_eager, tq_compiled = tensor_queue(DEVICE), tensor_queue(DEVICE)
    values = [torch.randn(4) for _ in range(3)]
    for value in values:
        tq_eager.push(value.to(DEVICE))
        tq_compiled.push(value.to(DEVICE))
    inc = torch.randn(4, device=DEVICE)
    ForEachAdd()(tq_eager, inc)
    torch.compile(ForEachAdd(), backend="eager", fullgraph=True)(tq_compiled, inc)
    torch.testing.assert_close([t.cpu() for t in queued(tq_compiled)], [t.cpu() for t in queued(tq_eager)])
    torch.testing.assert_close([t.cpu() for t in queued(tq_compiled)], [v + inc.cpu() for v in values])
