"""Device graphs on foo: a stream's work captured once (torch.foo.graph, torch.foo.FooGraph,
torch.accelerator.Graph, make_graphed_callables) and replayed without the host, compared with the
same work run eagerly, random ops drawing new numbers at each replay; what cannot be captured
(host synchronisations, the CPU fallback) raises during the capture, naming the op, and leaves the
stream usable."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
import torch_foo

from foo_testing import foo, needs_host_views, run_with_launch_blocking

# What a graph captures is launched kernels; where foo's kernels decline, their ops run on the CPU,
# which no capture may hold.
pytestmark = needs_host_views

STEPS = 10
GRAPHS = hasattr(torch.accelerator, "Graph")
"""torch.accelerator.Graph and GraphImplInterface: torch 2.14 on."""
needs_graphs = pytest.mark.skipif(not GRAPHS, reason=f"torch {torch.__version__} has no torch.accelerator.Graph")


def small_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(5, 8, generator=generator), torch.randn(5, 4, generator=generator)) for _ in range(STEPS)]


def squared_error(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """MSE from launched kernels (foo runs mse_loss inline and its backward on the CPU, which a
    capture refuses)."""
    return (output - target).pow(2).mean()


@needs_graphs
def test_a_captured_training_step_replayed_equals_eager_steps() -> None:
    data = batches()
    eager = small_model().to("foo")
    eager_opt = torch.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    eager_losses = []
    for x, y in data:
        eager_opt.zero_grad(set_to_none=True)
        loss = squared_error(eager(x.to("foo")), y.to("foo"))
        loss.backward()
        eager_opt.step()
        eager_losses.append(loss.item())

    model = small_model().to("foo")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    static_x = torch.zeros(5, 8, device="foo")
    static_y = torch.zeros(5, 4, device="foo")

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = squared_error(model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    # The first step runs eagerly on a side stream (the momentum buffers are made there, as CUDA's
    # warm-up makes them); the captured step is then the steady state, replayed for steps 2..10.
    side = foo.Stream()
    side.wait_stream(foo.current_stream())
    with foo.stream(side):
        static_x.copy_(data[0][0].to("foo"))
        static_y.copy_(data[0][1].to("foo"))
        losses = [step().item()]
    foo.current_stream().wait_stream(side)

    graph = foo.FooGraph()
    with foo.graph(graph):
        static_loss = step()
    for x, y in data[1:]:
        static_x.copy_(x.to("foo"))
        static_y.copy_(y.to("foo"))
        graph.replay()
        losses.append(static_loss.item())

    torch.testing.assert_close(losses, eager_losses)
    for mine, theirs in zip(model.parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(mine.cpu(), theirs.cpu())


@needs_graphs
def test_replays_compute_with_new_inputs_and_match_the_cpu() -> None:
    weight = torch.randn(6, 6)
    static_in = torch.zeros(3, 6, device="foo")
    device_weight = weight.to("foo")
    graph = foo.FooGraph()
    with foo.graph(graph):
        static_out = torch.relu(static_in @ device_weight + 1).sum(dim=1)
    for _ in range(3):
        x = torch.randn(3, 6)
        static_in.copy_(x.to("foo"))
        graph.replay()
        torch.testing.assert_close(static_out.cpu(), torch.relu(x @ weight + 1).sum(dim=1))


@needs_graphs
def test_captured_work_does_not_run_until_replayed() -> None:
    x = torch.zeros(4, device="foo")
    graph = foo.FooGraph()
    with foo.graph(graph):
        x.add_(1)
    assert x.cpu().tolist() == [0.0] * 4
    graph.replay()
    graph.replay()
    assert x.cpu().tolist() == [2.0] * 4


@needs_graphs
def test_torch_accelerator_graph_works_on_the_device() -> None:
    x = torch.ones(8, device="foo")
    stream = torch.Stream("foo")
    graph = torch.accelerator.Graph()
    with stream, graph:
        x.mul_(3)
    torch.accelerator.synchronize()
    for _ in range(2):
        graph.replay()
    assert x.cpu().tolist() == [9.0] * 8
    assert isinstance(foo.FooGraph(), torch.accelerator.Graph)


@needs_graphs
def test_make_graphed_callables_matches_eager_forward_and_backward() -> None:
    module = small_model().to("foo")
    reference = copy.deepcopy(module)
    sample = torch.randn(5, 8, device="foo", requires_grad=True)
    graphed = foo.make_graphed_callables(module, (sample,))
    assert graphed is module
    for _ in range(3):
        x = torch.randn(5, 8)
        mine_in = x.to("foo").requires_grad_()
        theirs_in = x.to("foo").requires_grad_()
        for p in (*module.parameters(), *reference.parameters()):
            p.grad = None
        mine = graphed(mine_in)
        theirs = reference(theirs_in)
        torch.testing.assert_close(mine.cpu(), theirs.cpu())
        (mine * mine).sum().backward()
        (theirs * theirs).sum().backward()
        torch.testing.assert_close(mine_in.grad.cpu(), theirs_in.grad.cpu())  # type: ignore[union-attr]
        for p, q in zip(module.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p.grad.cpu(), q.grad.cpu())  # type: ignore[union-attr]


@needs_graphs
def test_make_graphed_callables_of_functions() -> None:
    weight = torch.randn(4, 4, device="foo", requires_grad=True)

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x @ weight)

    def gn(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    sample = torch.randn(3, 4, device="foo", requires_grad=True)
    other_sample = sample.detach().clone().requires_grad_()
    graphed_fn, graphed_gn = foo.make_graphed_callables((fn, gn), ((sample,), (other_sample,)))
    x = torch.randn(3, 4, device="foo", requires_grad=True)
    out = graphed_gn(graphed_fn(x)).sum()
    out.backward()
    expected_x = x.detach().clone().requires_grad_()
    (torch.tanh(expected_x @ weight) * 2).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), expected_x.grad.cpu())  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("sync", "op"),
    [
        (lambda t: t.sum().item(), "aten::item"),
        (lambda t: t.cpu(), "aten::to"),
        (lambda t: foo.synchronize(), "synchronise"),
    ],
    ids=["item", "cpu", "synchronize"],
)
@needs_graphs
def test_a_host_sync_during_capture_raises_naming_it_and_the_stream_stays_usable(sync: object, op: str) -> None:
    x = torch.ones(4, device="foo")
    graph = foo.FooGraph()
    stream = foo.Stream()
    with pytest.raises(RuntimeError, match=op) as raised, foo.graph(graph, stream=stream):
        y = x + 1
        sync(y)  # type: ignore[operator]
    assert "captured into a graph" in str(raised.value)
    assert not foo.is_current_stream_capturing()
    with foo.stream(stream):
        assert (x * 5).cpu().tolist() == [5.0] * 4
    # The graph object can capture again after the failed capture.
    with foo.graph(graph, stream=stream):
        x.add_(1)
    graph.replay()
    assert x.cpu().tolist() == [2.0] * 4


@needs_graphs
def test_capture_end_reports_an_invalidated_capture() -> None:
    x = torch.ones(4, device="foo")
    stream = foo.Stream()
    graph = foo.FooGraph()
    with foo.stream(stream):
        graph.capture_begin()
        with pytest.raises(RuntimeError, match="aten::item"):
            x.sum().item()
        with pytest.raises(RuntimeError, match="capture .* failed: aten::item"):
            graph.capture_end()
    assert (x + 1).cpu().tolist() == [2.0] * 4


@needs_graphs
def test_the_cpu_fallback_cannot_be_captured_nor_draw_random_numbers_in_a_capture() -> None:
    x = torch.ones(6, device="foo")
    with pytest.raises(RuntimeError, match="cumprod.*CPU fallback"), foo.graph(foo.FooGraph()):
        torch.cumprod(x, 0)
    # exponential_ has no kernel of foo's: the fallback would draw its numbers once, at the capture.
    with pytest.raises(RuntimeError, match="exponential_.*random numbers on the host"), foo.graph(foo.FooGraph()):
        x.exponential_()
    assert torch.cumprod(x, 0).cpu().tolist() == [1.0] * 6


@needs_graphs
def test_a_captured_dropout_draws_new_numbers_at_each_replay_reproducibly_under_manual_seed() -> None:
    x = torch.ones(4000, device="foo")
    graph = foo.FooGraph()
    with foo.graph(graph):
        first = torch.nn.functional.dropout(x, 0.5, training=True)
        second = torch.nn.functional.dropout(x, 0.5, training=True)

    def replay() -> tuple[torch.Tensor, torch.Tensor]:
        graph.replay()
        return first.cpu(), second.cpu()

    torch.manual_seed(7)
    replays = [replay() for _ in range(3)]
    for masks in replays:
        for kept in masks:
            assert set(kept.unique().tolist()) == {0.0, 2.0}  # dropped, or kept and scaled by 1/(1-p)
            assert 0.45 < kept.mean().item() / 2 < 0.55
    assert not torch.equal(replays[0][0], replays[0][1]), "two dropouts of one replay drew the same mask"
    assert not torch.equal(replays[0][0], replays[1][0]), "a replay repeated the previous replay's mask"
    # Each replay draws its seed from the generator, as CUDA's replays advance its offset: the same
    # seed gives the same replays, and eager draws after them go on with the generator's stream.
    after = torch.rand(5, device="foo").cpu()
    torch.manual_seed(7)
    again = [replay() for _ in range(3)]
    for (mine, theirs) in zip(replays, again, strict=True):
        assert torch.equal(mine[0], theirs[0]) and torch.equal(mine[1], theirs[1])
    assert torch.equal(torch.rand(5, device="foo").cpu(), after)


@needs_graphs
def test_captured_factories_and_a_generator_of_the_users_draw_per_replay_and_raise_at_the_call() -> None:
    generator = torch.Generator("foo").manual_seed(3)
    graph = foo.FooGraph()
    with foo.graph(graph):
        normal = torch.randn(3000, device="foo")
        uniform = torch.empty(3000, device="foo").uniform_(2, 4, generator=generator)
        integers = torch.randint(0, 10, (3000,), device="foo")
        with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
            torch.empty(3, device="foo").random_(5, 2)
    state = generator.get_state()
    graph.replay()
    assert not torch.equal(generator.get_state(), state), "the replay drew nothing from the user's generator"
    samples = normal.cpu()
    assert abs(samples.mean().item()) < 0.1 and abs(samples.std().item() - 1) < 0.1
    assert uniform.cpu().min().item() >= 2 and uniform.cpu().max().item() < 4
    assert set(integers.cpu().unique().tolist()) == set(range(10))
    graph.replay()
    assert not torch.equal(normal.cpu(), samples)


@needs_graphs
def test_a_captured_training_step_with_dropout_learns_from_its_masks() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Dropout(0.5), torch.nn.Linear(64, 1)).to("foo")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    static_x = torch.randn(32, 8).to("foo")
    static_y = static_x.sum(dim=1, keepdim=True)

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=False)
        loss = squared_error(model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    step()  # gradients exist before the capture: zero_grad(set_to_none=False) reuses them
    graph = foo.FooGraph()
    with foo.graph(graph):
        static_loss = step()
    losses = []
    for _ in range(60):
        graph.replay()
        losses.append(static_loss.item())
    assert len(set(losses)) == len(losses), "replays repeated a dropout mask"
    assert sum(losses[-10:]) < 0.5 * sum(losses[:10]), losses


@needs_graphs
def test_a_side_stream_forked_and_joined_by_events_is_captured_with_its_memory_in_the_pool() -> None:
    """CUDA's fork and join: a stream that waits on an event recorded in the capture joins it; its
    work replays in the graph, after what it waited for, and what it allocates comes from the graph's
    pool."""
    weight_a, weight_b = torch.randn(16, 16), torch.randn(16, 16)
    static_in = torch.zeros(4, 16, device="foo")
    device_a, device_b = weight_a.to("foo"), weight_b.to("foo")
    side = foo.Stream()
    graph = foo.FooGraph()
    with foo.graph(graph):
        main = static_in @ device_a
        side.wait_stream(foo.current_stream())
        with foo.stream(side):
            assert foo.is_current_stream_capturing()
            branch = (static_in @ device_b).relu() * 2  # an intermediate freed on the side stream
        foo.current_stream().wait_stream(side)
        static_out = main + branch
    assert not foo.is_current_stream_capturing()
    segments = foo.memory._snapshot()["segments"]
    [branch_segment] = [s for s in segments if s["address"] <= branch.data_ptr() < s["address"] + s["total_size"]]
    assert tuple(branch_segment["segment_pool_id"]) == graph.pool()
    for _ in range(3):
        x = torch.randn(4, 16)
        static_in.copy_(x.to("foo"))
        graph.replay()
        torch.testing.assert_close(static_out.cpu(), x @ weight_a + (x @ weight_b).relu() * 2)
    # The side stream runs eagerly again.
    with foo.stream(side):
        assert (static_in * 0 + 1).cpu().eq(1.0).all()


@needs_graphs
def test_a_forked_stream_not_joined_back_fails_the_capture_naming_the_fix() -> None:
    x = torch.ones(4, device="foo")
    side = foo.Stream()
    stream = foo.Stream()
    unjoined = r"did not wait for.*wait_stream\(side_stream\)"
    with pytest.raises(RuntimeError, match=unjoined), foo.graph(foo.FooGraph(), stream=stream):
        side.wait_stream(foo.current_stream())
        with foo.stream(side):
            x.add_(1)
    for usable in (side, stream):
        with foo.stream(usable):
            assert not foo.is_current_stream_capturing()
            assert (x * 3).cpu().tolist() == [3.0] * 4


@needs_graphs
def test_events_across_the_capture_boundary_raise_as_on_cuda() -> None:
    x = torch.ones(4, device="foo")
    side = foo.Stream()
    outside = torch.Event("foo")
    outside.record(side)
    # Waiting on work outside the capture: a replay could not wait for it.
    with pytest.raises(RuntimeError, match="event recorded outside the capture"), foo.graph(foo.FooGraph()):
        x.add_(1)
        foo.current_stream().wait_event(outside)
    # The host waiting for an event recorded in the capture: it completes only at a replay.
    inside = torch.Event("foo")
    with pytest.raises(RuntimeError, match="event recorded in the capture"), foo.graph(foo.FooGraph()):
        x.add_(1)
        inside.record()
        inside.synchronize()
    assert inside.query()  # after the capture, as it was before
    assert x.cpu().tolist() == [1.0] * 4


@needs_graphs
def test_a_compiled_function_is_captured_and_reduce_overhead_runs_without_cudagraph_trees() -> None:
    """Inductor's kernels are launched like eager ones, so a compiled function captures; its
    CUDA-graph trees are CUDA's alone, so mode="reduce-overhead" skips them (and says so) and
    computes as the default mode does."""
    from torch._dynamo.utils import counters

    weight = torch.randn(8, 8)
    device_weight = weight.to("foo")

    def step(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ device_weight + 1).sum(dim=1) * 2

    compiled = torch.compile(step)
    static_in = torch.zeros(4, 8, device="foo")
    compiled(static_in)  # compiles outside the capture
    graph = foo.FooGraph()
    with foo.graph(graph):
        static_out = compiled(static_in)
    for _ in range(2):
        x = torch.randn(4, 8)
        static_in.copy_(x.to("foo"))
        graph.replay()
        torch.testing.assert_close(static_out.cpu(), torch.relu(x @ weight + 1).sum(dim=1) * 2)
    torch._dynamo.reset()
    counters.clear()
    reduce_overhead = torch.compile(step, mode="reduce-overhead")
    x = torch.randn(4, 8)
    for _ in range(3):
        result = reduce_overhead(x.to("foo"))
    torch.testing.assert_close(result.cpu(), torch.relu(x @ weight + 1).sum(dim=1) * 2)
    assert counters["inductor"]["cudagraph_skips"] >= 1


@needs_graphs
def test_captured_memory_is_a_private_pool_released_with_the_graph() -> None:
    x = torch.ones(1 << 16, device="foo")
    graph = foo.FooGraph()
    with foo.graph(graph):
        y = x * 2
    pool = graph.pool()
    assert torch_foo._C._pool_reserved_bytes(-1, *pool) > 0
    # Eager allocations never get the pool's memory.
    eager = torch.empty(1 << 16, device="foo")
    assert eager.data_ptr() != y.data_ptr()
    # A second graph shares the pool when asked to.
    second = foo.FooGraph()
    with foo.graph(second, pool=pool):
        z = y + 1
    assert second.pool() == pool
    graph.replay()
    second.replay()
    assert z.cpu()[:2].tolist() == [3.0, 3.0]
    del y, z
    held = torch_foo._C._pool_reserved_bytes(-1, *pool)
    graph.reset()
    assert torch_foo._C._pool_reserved_bytes(-1, *pool) == held  # the second graph still uses the pool
    reserved = foo.memory_reserved()
    second.reset()
    assert foo.memory_reserved() <= reserved - held  # the pool's memory went back to the device


@needs_graphs
def test_graph_pool_handle_and_debug_dump(tmp_path: Path) -> None:
    handle = foo.graph_pool_handle()
    assert handle != foo.graph_pool_handle()
    graph = foo.FooGraph()
    graph.enable_debug_mode()
    x = torch.ones(4, device="foo")
    with foo.graph(graph, pool=handle):
        x.add_(1).mul_(2)
    assert graph.pool() == handle
    path = tmp_path / "graph.dot"
    graph.debug_dump(str(path))
    text = path.read_text()
    assert text.startswith("digraph") and text.count("kernel") == 2


@needs_graphs
def test_graphs_work_with_launch_blocking() -> None:
    result = run_with_launch_blocking(
        "import torch, torch_foo\n"
        "x = torch.ones(4, device='foo')\n"
        "g = torch.foo.FooGraph()\n"
        "with torch.foo.graph(g):\n"
        "    x.add_(1)\n"
        "print(x.cpu().tolist())\n"
        "g.replay(); g.replay()\n"
        "print(x.cpu().tolist())\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[1.0, 1.0, 1.0, 1.0]", "[3.0, 3.0, 3.0, 3.0]"]


@pytest.mark.skipif(GRAPHS, reason="this torch has torch.accelerator.Graph")
def test_without_torch_accelerator_graph_the_graph_api_says_what_it_needs() -> None:
    with pytest.raises(RuntimeError, match=r"FooGraph needs torch.accelerator.Graph \(torch 2.14 or later\)"):
        foo.FooGraph()
