"""One rank of a distributed test on the foo device: ``python distributed_worker.py SCENARIO``.

Started by test_distributed.py with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (the env://
rendezvous of ``dist.init_process_group``). A scenario checks its results itself and exits
non-zero with a message on stderr when they are wrong; it prints ``OK <scenario>`` when right.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from collections.abc import Iterable

import torch
import torch.distributed as dist
import torch_foo
from torch.nn.parallel import DistributedDataParallel

# torch.foo, which importing torch_foo registers (this script runs on its own, without the tests'
# foo_testing.foo): torch's lookup of it has a type.
foo = torch.get_device_module("foo")
RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
# Two ranks share a simulated device when there are more ranks than devices: fine, the memory
# of each process is its own.
DEVICE = torch.device("foo", RANK % foo.device_count())


def check(name: str, actual: torch.Tensor, expected: torch.Tensor) -> None:
    if actual.device != DEVICE:
        raise AssertionError(f"rank {RANK} {name}: result on {actual.device}, expected {DEVICE}")
    got = actual.cpu()
    if got.dtype != expected.dtype or got.shape != expected.shape or not torch.equal(
        got, expected
    ):
        raise AssertionError(f"rank {RANK} {name}: got {got!r}, expected {expected!r}")


def summed(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """sum() of tensors (which starts from the int 0, so its type is not a tensor's)."""
    total = sum(tensors)
    assert isinstance(total, torch.Tensor), "nothing to sum"
    return total


def ranked(shape: tuple[int, ...], rank: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Values that differ per rank and per element (CPU)."""
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float64).reshape(shape) + 100 * (rank + 1)).to(dtype)


def on_device(t: torch.Tensor) -> torch.Tensor:
    return t.to(DEVICE)


def collectives() -> None:
    foo.set_device(DEVICE.index)
    ranks = range(WORLD)
    shape = (3, 4)
    everyone = [ranked(shape, r) for r in ranks]

    # all_reduce, every op Gloo has, plus AVG (SUM then divide)
    expected_by_op = {
        dist.ReduceOp.SUM: summed(everyone),
        dist.ReduceOp.PRODUCT: torch.stack(everyone).prod(0),
        dist.ReduceOp.MAX: torch.stack(everyone).amax(0),
        dist.ReduceOp.MIN: torch.stack(everyone).amin(0),
        dist.ReduceOp.AVG: summed(everyone) / WORLD,
    }
    for op, expected in expected_by_op.items():
        t = on_device(ranked(shape, RANK))
        dist.all_reduce(t, op=op)
        check(f"all_reduce {op}", t, expected)
    for op, fold in ((dist.ReduceOp.BAND, "__and__"), (dist.ReduceOp.BOR, "__or__")):
        values = [torch.tensor([r + 1, 7, 12], dtype=torch.int64) for r in ranks]
        expected = values[0]
        for v in values[1:]:
            expected = getattr(expected, fold)(v)
        t = on_device(values[RANK])
        dist.all_reduce(t, op=op)
        check(f"all_reduce {op}", t, expected)

    # async work: wait() then read on the current stream
    t = on_device(ranked(shape, RANK, torch.float64))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    check("all_reduce async", t, summed(ranked(shape, r, torch.float64) for r in ranks))
    fut = dist.all_reduce(on_device(ranked(shape, RANK)), async_op=True).get_future()
    check("all_reduce future", fut.wait()[0], expected_by_op[dist.ReduceOp.SUM])

    # a non-contiguous source: a view with an offset into a larger tensor
    base = on_device(torch.zeros(4, 8))
    view = base[1:3, 2:6]  # offset, strides (8, 1): Gloo sees the same memory through host_view
    if torch_foo.distributed._memory_mode("foo") == "host_view":
        view_c = base[1:2].reshape(8)  # contiguous, storage offset 8
        view_c.copy_(on_device(ranked((8,), RANK)))
        dist.all_reduce(view_c)
        check("all_reduce offset view", view_c, summed(ranked((8,), r) for r in ranks))
        if base[0].abs().sum().item() != 0 or base[2:].abs().sum().item() != 0:
            raise AssertionError(f"rank {RANK}: all_reduce wrote outside the view")
    del view

    # broadcast from every root
    for root in ranks:
        t = on_device(ranked(shape, RANK))
        dist.broadcast(t, src=root)
        check(f"broadcast from {root}", t, ranked(shape, root))

    # all_gather (list) and all_gather_into_tensor
    outs = [on_device(torch.zeros(shape)) for _ in ranks]
    dist.all_gather(outs, on_device(ranked(shape, RANK)))
    for r, out in enumerate(outs):
        check(f"all_gather[{r}]", out, ranked(shape, r))
    out = on_device(torch.zeros((WORLD * shape[0], shape[1])))
    dist.all_gather_into_tensor(out, on_device(ranked(shape, RANK)))
    check("all_gather_into_tensor", out, torch.cat(everyone))

    # reduce_scatter (list) and reduce_scatter_tensor: rank r gets the sum of everyone's chunk r
    chunks = {r: [ranked(shape, r) * (c + 1) for c in ranks] for r in ranks}
    out = on_device(torch.zeros(shape))
    dist.reduce_scatter(out, [on_device(c) for c in chunks[RANK]])
    check("reduce_scatter", out, summed(chunks[r][RANK] for r in ranks))
    out = on_device(torch.zeros(shape))
    dist.reduce_scatter_tensor(out, on_device(torch.cat(chunks[RANK])))
    check("reduce_scatter_tensor", out, summed(chunks[r][RANK] for r in ranks))
    out = on_device(torch.zeros(shape))
    dist.reduce_scatter_tensor(out, on_device(torch.cat(chunks[RANK])), op=dist.ReduceOp.AVG)
    check("reduce_scatter_tensor avg", out, summed(chunks[r][RANK] for r in ranks) / WORLD)

    # all_to_all (list, sizes differ per pair) and all_to_all_single
    def piece(src: int, dst: int) -> torch.Tensor:
        return torch.full((src + dst + 1,), float(10 * src + dst))

    outs = [on_device(torch.zeros(src + RANK + 1)) for src in ranks]
    dist.all_to_all(outs, [on_device(piece(RANK, dst)) for dst in ranks])
    for src, out in enumerate(outs):
        check(f"all_to_all from {src}", out, piece(src, RANK))
    inp = on_device(torch.cat([piece(RANK, dst) for dst in ranks]))
    out = on_device(torch.zeros(sum(src + RANK + 1 for src in ranks)))
    dist.all_to_all_single(
        out,
        inp,
        output_split_sizes=[src + RANK + 1 for src in ranks],
        input_split_sizes=[RANK + dst + 1 for dst in ranks],
    )
    check("all_to_all_single", out, torch.cat([piece(src, RANK) for src in ranks]))

    # send/recv around the ring, blocking and non-blocking
    right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    received = on_device(torch.zeros(shape))
    if RANK % 2 == 0:
        dist.send(on_device(ranked(shape, RANK)), right)
        dist.recv(received, left)
    else:
        dist.recv(received, left)
        dist.send(on_device(ranked(shape, RANK)), right)
    check("send/recv", received, ranked(shape, left))
    received = on_device(torch.zeros(shape))
    works = [dist.isend(on_device(ranked(shape, RANK)), right), dist.irecv(received, left)]
    for w in works:
        assert w is not None, "this rank is in the default group: the request has a Work"
        w.wait()
    check("isend/irecv", received, ranked(shape, left))
    batch_works = dist.batch_isend_irecv(
        [
            dist.P2POp(dist.isend, on_device(ranked(shape, RANK)), right),
            dist.P2POp(dist.irecv, received, left),
        ]
    )
    for work in batch_works:
        work.wait()
    check("batch_isend_irecv", received, ranked(shape, left))

    # reduce, gather, scatter to/from root 0
    t = on_device(ranked(shape, RANK))
    dist.reduce(t, dst=0)
    if RANK == 0:
        check("reduce", t, expected_by_op[dist.ReduceOp.SUM])
    gathered = [on_device(torch.zeros(shape)) for _ in ranks] if RANK == 0 else None
    dist.gather(on_device(ranked(shape, RANK)), gathered, dst=0)
    if gathered is not None:
        for r, g in enumerate(gathered):
            check(f"gather[{r}]", g, ranked(shape, r))
    out = on_device(torch.zeros(shape))
    dist.scatter(out, [on_device(ranked(shape, r)) for r in ranks] if RANK == 0 else None, src=0)
    check("scatter", out, ranked(shape, RANK))

    # objects (pickled through device tensors when the group's device is foo), barrier
    objects: list[object] = [None] * WORLD
    dist.all_gather_object(objects, {"rank": RANK})
    if objects != [{"rank": r} for r in ranks]:
        raise AssertionError(f"rank {RANK}: all_gather_object gave {objects}")
    dist.barrier()

    # CPU tensors go straight to Gloo through the same group
    t = ranked(shape, RANK)
    dist.all_reduce(t)
    if not torch.equal(t, expected_by_op[dist.ReduceOp.SUM]):
        raise AssertionError(f"rank {RANK}: CPU all_reduce gave {t}")

    # unsupported: one clear error naming the op and the backend
    try:
        dist.all_reduce(on_device(torch.ones(2, dtype=torch.int64)), op=dist.ReduceOp.AVG)
    except NotImplementedError as error:
        if "allreduce with ReduceOp.AVG is not supported by the fooccl backend" not in str(error):
            raise AssertionError(f"rank {RANK}: unclear error {error}") from error
    else:
        raise AssertionError(f"rank {RANK}: integer AVG did not raise")


STEPS, PER_RANK = 4, 3


def small_model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(PER_RANK, 5, generator=g), torch.randn(PER_RANK, 2, generator=g)


def train(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x.to(DEVICE)), y.to(DEVICE))
        opt.zero_grad()
        loss.backward()
        opt.step()


def single_process_reference() -> torch.nn.Module:
    """Every rank's batch at once, in one process (on the device too)."""
    reference = small_model().to(DEVICE)
    batches = []
    for step in range(STEPS):
        xs, ys = zip(*(batch(step, r) for r in range(WORLD)), strict=True)
        batches.append((torch.cat(xs), torch.cat(ys)))
    train(reference, batches)
    return reference


def assert_same_weights(kind: str, trained: dict[str, torch.Tensor], reference: torch.nn.Module) -> None:
    for (name, p), q in zip(trained.items(), reference.parameters(), strict=True):
        if p.device != DEVICE:
            raise AssertionError(f"rank {RANK} {kind}: {name} on {p.device}")
        if not torch.allclose(p.detach().cpu(), q.detach().cpu(), rtol=1e-5, atol=1e-6):
            raise AssertionError(
                f"rank {RANK} {kind}: {name} differs from single-process training by "
                f"{(p.detach().cpu() - q.detach().cpu()).abs().max().item()}"
            )


def my_batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [batch(step, RANK) for step in range(STEPS)]


def ddp() -> None:
    """DDP for a few steps == one process on the concatenated batch."""
    foo.set_device(DEVICE.index)
    reference = single_process_reference()
    # slightly different init on each rank: DDP must broadcast rank 0's weights first
    local = small_model()
    with torch.no_grad():
        next(local.parameters()).add_(RANK)
    ddp_model = DistributedDataParallel(local.to(DEVICE), device_ids=[DEVICE.index])
    train(ddp_model, my_batches())
    assert_same_weights("DDP", dict(ddp_model.module.named_parameters()), reference)


def fsdp() -> None:
    """FSDP2 (`fully_shard`, per layer and at the root) and FSDP1 (`FullyShardedDataParallel`)
    for a few steps == one process on the concatenated batch: the all_gather_into_tensor /
    reduce_scatter_tensor path, DeviceMesh on the device, and FSDP's streams and events."""
    from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
    from torch.distributed.tensor import DTensor

    foo.set_device(DEVICE.index)
    reference = single_process_reference()

    sharded = small_model().to(DEVICE)
    for layer in sharded:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(sharded)
    train(sharded, my_batches())
    full = {}
    for name, p in sharded.named_parameters():
        if not isinstance(p, DTensor) or p.to_local().device != DEVICE:
            raise AssertionError(f"rank {RANK} FSDP2: {name} is not a DTensor sharded on {DEVICE}")
        if p.to_local().shape[0] >= p.shape[0] and p.shape[0] >= WORLD:
            raise AssertionError(f"rank {RANK} FSDP2: {name} is not sharded ({p.to_local().shape})")
        full[name] = p.full_tensor()
    assert_same_weights("FSDP2", full, reference)

    flat = FullyShardedDataParallel(small_model().to(DEVICE), device_id=DEVICE)
    train(flat, my_batches())
    with FullyShardedDataParallel.summon_full_params(flat):
        gathered = {name: p.detach().clone() for name, p in flat.module.named_parameters()}
    assert_same_weights("FSDP1", gathered, reference)


def wait_gates_the_stream() -> None:
    """Work.wait() returns before the collective is done and makes the current stream wait.

    Rank 1 joins the all_reduce only after rank 0's wait() has returned (told through the
    store), so a wait() that blocked the host would never return: the test proves the
    asynchrony without timing. Meanwhile rank 0's current stream is gated (query() is False),
    and work on it after the wait() -- the add below -- sees the reduced values."""
    foo.set_device(DEVICE.index)
    store = dist.distributed_c10d._get_default_store()
    t = on_device(torch.full((64,), float(RANK + 1)))
    expected = torch.full((64,), float(sum(range(1, WORLD + 1))))
    side = foo.Stream()
    with foo.stream(side):  # a non-default current stream, as in an overlap pattern
        if RANK == 0:
            work = dist.all_reduce(t, async_op=True)
            work.wait()
            if side.query():
                raise AssertionError("rank 0: the stream is idle while the all_reduce is pending")
            store.set("rank 0 waited", "yes")
            plus_one = t + 1  # ordered behind the collective on the gated stream
            check("result after wait()", t, expected)
            check("work queued after wait()", plus_one, expected + 1)
        else:
            store.wait(["rank 0 waited"])
            dist.all_reduce(t)
            check("result", t, expected)


def rank_dies() -> None:
    """The last rank exits before the collective: the others must fail with an error, soon."""
    foo.set_device(DEVICE.index)
    dist.barrier()
    if RANK == WORLD - 1:
        os._exit(3)
    t = on_device(torch.ones(1000))
    start = time.monotonic()
    try:
        dist.all_reduce(t)  # returns once the current stream waits for the collective
        t.cpu()  # reads the result: the host waits here
    except Exception as error:  # noqa: BLE001 -- what the test looks at is the message
        print(f"FAILED after {time.monotonic() - start:.1f}s: {type(error).__name__}: {error}")
        sys.stdout.flush()
        os._exit(0)  # the group is broken; skip destroy_process_group
    raise AssertionError(f"rank {RANK}: all_reduce succeeded without the last rank")


SCENARIOS = {
    "collectives": collectives,
    "wait_gates_the_stream": wait_gates_the_stream,
    "ddp": ddp,
    "fsdp": fsdp,
    "rank_dies": rank_dies,
}


def main() -> None:
    scenario = sys.argv[1]
    backend = os.environ.get("FOO_TEST_BACKEND") or None
    memory = os.environ.get("FOO_TEST_MEMORY") or None
    torch_foo.distributed.set_memory_mode("foo", memory)
    timeout = datetime.timedelta(seconds=float(os.environ.get("FOO_TEST_TIMEOUT", "60")))
    if backend is None:
        dist.init_process_group(timeout=timeout)  # no backend argument: the device's default
    else:
        dist.init_process_group(backend=backend, timeout=timeout)
    group = dist.distributed_c10d._get_default_group()
    if not isinstance(group, torch_foo.distributed.CollectiveProcessGroup) or group.name() != "fooccl":
        raise AssertionError(f"rank {RANK}: the default group is {group!r}")
    SCENARIOS[scenario]()
    dist.destroy_process_group()
    print(f"OK {scenario} rank {RANK} backend {backend or 'default'} memory {memory or 'default'}")


if __name__ == "__main__":
    main()
