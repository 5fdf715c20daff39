"""torch.distributed (c10d) for the device: collectives through Gloo on host views of device memory.

``register(device_name)`` (called by the package on import) registers the c10d backend
``<device>ccl`` for the device, so that on a machine with the device::

    dist.init_process_group()                                  # picks <device>ccl
    dist.init_process_group(backend="cpu:gloo,<device>:<device>ccl")

work, and DDP / FSDP run on it. The collectives themselves are Gloo's (``ProcessGroupGloo`` from
the torch wheel): this module only hands Gloo host memory and orders the work with the device.

* **Host-addressable memory** (the simulated driver's device memory is host RAM mapped twice,
  see ``driver/simulated_memory.cpp``): Gloo reads and writes the device tensors through
  ``torch.ops.scaffold_runtime.host_view`` (``csrc/host_view/host_view_op.cpp``): CPU tensors aliasing the
  device memory through the runtime's host mapping, no copy, memory protection left on.
* **Otherwise** (a driver whose memory the host cannot address, ``SCAFFOLD_DEVICE_MEMORY=discrete``
  for the simulated one, or ``memory="staging"``): inputs are copied
  into pinned host buffers and results copied back when Gloo finishes.

Ordering, as NCCL does it with CUDA streams: before Gloo touches memory, the current stream of
every device involved is synchronised (kernels queued on it have produced their inputs). After
it, ``work.wait()`` makes the current stream of each device wait for Gloo's work on the device
side and returns without blocking the host (``_FutureWork``); kernels launched later on that
stream run once the results are in place. The work's future is created with the devices of its
tensors, so ``get_future().wait()`` orders the current stream the same way (c10's
``ivalue::Future`` records events through the device guard).

Why a Python ``ProcessGroup`` subclass wrapping a ``ProcessGroupGloo``, not C++: every supported
torch (2.11 to 2.14) can subclass ``ProcessGroup`` from Python (``c10d::Backend`` only became
subclassable in later releases), the class uses only public Python APIs of c10d (no ABI of
``ProcessGroupGloo``, no gloo headers, no libtorch_python link for the runtime). The price is
Python per collective (a few calls and one future callback on Gloo's thread): it shows on small
tensors, not large ones; ``benchmarks/bench_distributed.py`` measures it against plain Gloo. c10d treats a creator that
returns a ``ProcessGroup`` as the whole group, so this class also serves CPU tensors (straight
to Gloo): ``cpu:gloo,<device>:<device>ccl`` then runs both devices through it.

**Your own collective library.** Keep ``CollectiveProcessGroup`` and the registration; make
``_engine()`` (today: a ``ProcessGroupGloo``) return an object with the same methods on your
library (``allreduce``, ``broadcast``, ``allgather``, ``_allgather_base``, ``reduce_scatter``,
``_reduce_scatter_base``, ``alltoall_base``, ``send``, ``recv``, ``barrier``, ...: the c10d
``Backend`` methods, returning ``Work``; ``COLLECTIVES`` lists which the group calls, by which
engine names), and make ``_memory_mode`` return ``"device"`` so your library gets the device
tensors themselves. See the project README.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime
import enum
import functools
import inspect
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

if TYPE_CHECKING:  # torch.distributed re-exports it at run time only
    from torch._C._distributed_c10d import Store

# host_view: Gloo on CPU aliases of device memory; staging: through pinned host copies; device:
# the engine gets the device tensors (for an engine that is not Gloo, see _engine).
MEMORY_MODES = ("host_view", "staging", "device")

_memory_override: dict[str, str] = {}


def backend_name(device_name: str) -> str:
    """The c10d backend name of the device: ``<device>ccl`` (like nccl, hccl, xccl)."""
    return f"{device_name}ccl"


def host_view_available(device_name: str) -> bool:
    """True when the runtime can alias device memory from the host: it has the ``host_view`` op
    and the driver says device memory is host-addressable."""
    try:
        has_op = hasattr(torch.ops.scaffold_runtime, "host_view")
    except (AttributeError, RuntimeError):
        return False
    module = getattr(torch, device_name, None)
    addressable = getattr(module, "device_memory_is_host_addressable", None)
    return has_op and (addressable is None or bool(addressable()))


def set_memory_mode(device_name: str, mode: str | None) -> None:
    """Force a memory mode (MEMORY_MODES) for process groups created from now on (``None``: the
    runtime's capability decides). For tests and benchmarks of the staging path, and for an
    engine that reads device memory itself ("device")."""
    if mode is None:
        _memory_override.pop(device_name, None)
        return
    if mode not in MEMORY_MODES:
        raise ValueError(f"memory mode must be one of {MEMORY_MODES}, got {mode!r}")
    if mode == "host_view" and not host_view_available(device_name):
        raise ValueError("the host cannot address this device's memory: no host_view mode")
    _memory_override[device_name] = mode


def _memory_mode(device_name: str) -> str:
    if device_name in _memory_override:
        return _memory_override[device_name]
    return "host_view" if host_view_available(device_name) else "staging"


def register(device_name: str) -> None:
    """Register ``<device>ccl`` with c10d as the default backend of the device. Idempotent;
    does nothing when torch was built without distributed support or without Gloo."""
    if not dist.is_available() or not dist.is_gloo_available():
        return
    name = backend_name(device_name)
    if name.upper() in dist.Backend._plugins:
        return

    def create(
        store: Store, rank: int, size: int, timeout: datetime.timedelta
    ) -> CollectiveProcessGroup:
        return CollectiveProcessGroup(store, rank, size, timeout, device_name=device_name)

    dist.Backend.register_backend(name, create, devices=["cpu", device_name])
    # register_backend only fills the device -> default backend map for devices without one;
    # make sure ours is the default for the device.
    dist.Backend.default_device_backend_map[device_name] = name


def _engine(store: Store, rank: int, size: int, timeout: datetime.timedelta) -> Any:
    """The collective engine: Gloo. Swap here for your own library (see module docstring)."""
    return dist.ProcessGroupGloo(store, rank, size, timeout)


class _Staged:
    """Host tensors for one collective, and what to do with them once the engine is done.

    ``host_view`` mode aliases device memory; ``staging`` mode copies into pinned buffers and
    back. CPU tensors are used as they are."""

    def __init__(self, device_name: str, mode: str) -> None:
        self.device_name = device_name
        self.mode = mode
        self.devices: set[torch.device] = set()
        self.copy_back: list[tuple[torch.Tensor, torch.Tensor]] = []

    def _on_device(self, tensor: torch.Tensor) -> bool:
        if tensor.device.type == "cpu":
            return False
        if tensor.device.type != self.device_name:
            raise ValueError(
                f"{backend_name(self.device_name)} got a tensor on {tensor.device}: it handles "
                f"'{self.device_name}' and 'cpu' tensors only"
            )
        if tensor.layout != torch.strided:
            raise NotImplementedError(
                f"{backend_name(self.device_name)} supports strided (dense) tensors only, got "
                f"layout {tensor.layout}"
            )
        self.devices.add(tensor.device)
        return True

    def host(self, tensor: torch.Tensor, read: bool, write: bool) -> torch.Tensor:
        """``tensor`` as the engine gets it, for an engine that reads it, writes it or both."""
        if not self._on_device(tensor):
            return tensor
        tensor = tensor.detach()
        if self.mode == "device":  # an engine that reads device memory itself
            return tensor
        if self.mode == "host_view":
            view: torch.Tensor = torch.ops.scaffold_runtime.host_view(tensor)
            return view
        staged = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        if read:
            staged.copy_(tensor, non_blocking=True)
        if write:
            self.copy_back.append((tensor, staged))
        return staged

    def input(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.host(tensor, read=True, write=False)

    def output(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.host(tensor, read=False, write=True)

    def synchronize(self) -> None:
        """Wait for the work queued on the current stream of each device: the engine reads
        the memory from its own threads."""
        for device in sorted(self.devices, key=str):
            torch.accelerator.current_stream(device).synchronize()

    def finish(self) -> None:
        for device_tensor, staged in self.copy_back:
            device_tensor.copy_(staged)


class _FutureWork(dist.Work):
    """The Work of a collective, over its future.

    ``wait()`` does what NCCL's does where it can: when the engine's own work delivers the
    results (nothing left to do after it, such as AVG's division or a staging copy), it makes
    the current stream of every device involved wait for that work on the device side
    (``scaffold_runtime.stream_wait_work``, runtime/csrc/streams/stream_wait_work_op.cpp) and returns at
    once; the host blocks only where it reads results (``.cpu()``, ``.item()``,
    ``synchronize()``). A collective that fails after that aborts the process, as NCCL's
    asynchronous error handling does. Otherwise ``wait()`` blocks until the results are in
    place, and raises the collective's error."""

    def __init__(
        self,
        future: torch.futures.Future[Any],
        devices: Sequence[torch.device] = (),
        what: str = "collective",
        engine_work: dist.Work | None = None,
    ) -> None:
        super().__init__()
        self._future = future
        self._devices = list(devices)
        self._what = what
        self._engine_work = engine_work

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        if self._engine_work is None or not self._devices or self._future.done():
            self._future.wait()  # raises the collective's error
            return True
        boxed = self._engine_work.boxed()
        for device in self._devices:
            stream = torch.accelerator.current_stream(device)
            torch.ops.scaffold_runtime.stream_wait_work(
                boxed, stream.device_index, stream.stream_id, self._what
            )
        return True

    def get_future(self) -> torch.futures.Future[Any]:
        return self._future

    def is_completed(self) -> bool:
        return self._future.done()


@contextlib.contextmanager
def _current_streams(streams: Sequence[torch.Stream]) -> Iterator[None]:
    """Make ``streams`` current on their devices for the calling thread, for the block."""
    previous = [torch.accelerator.current_stream(s.device) for s in streams]
    for stream in streams:
        torch.accelerator.set_stream(stream)
    try:
        yield
    finally:
        for stream in previous:
            torch.accelerator.set_stream(stream)


def _unsupported(op: str, device_name: str, why: str = "") -> NotImplementedError:
    reason = f": {why}" if why else ""
    return NotImplementedError(
        f"{op} is not supported by the {backend_name(device_name)} backend "
        f"(device '{device_name}', engine Gloo){reason}"
    )


class Staging(enum.Enum):
    """What a collective does with an argument, which says how the group stages it (_Staged)."""

    IN = "in"  # the engine reads it: a host view, or a pinned copy of it (staging)
    OUT = "out"  # the engine writes it: a host view, or a pinned buffer copied back when done
    INOUT = "inout"  # the engine reads and writes it (in place)
    PLAIN = "plain"  # not tensors (split sizes, ranks, tags): handed to the engine as it is


IN, OUT, INOUT, PLAIN = Staging.IN, Staging.OUT, Staging.INOUT, Staging.PLAIN


@dataclasses.dataclass(frozen=True)
class Collective:
    """A collective that CollectiveProcessGroup runs by staging its tensors and calling the
    engine's method of the same arguments.

    c10d calls the group's method ``name`` (or an alias) with the ``params`` in order, then the
    options when the collective has an options class (None or left out: its defaults). An
    argument is a tensor, a list of tensors or a list of lists of them, staged as its Staging
    says. The work's future completes with the tensors written (OUT, INOUT), or, on a rank that
    writes none (a sender, gather off the root), with the tensors read."""

    name: str  # the ProcessGroup method that c10d calls
    params: tuple[tuple[str, Staging], ...]  # the arguments before the options
    # The c10d options class, by its name in torch.distributed.distributed_c10d (not all of them
    # are exported by torch.distributed: AllgatherOptions is not); None: the method takes none.
    options: str | None
    label: str = ""  # its name in messages: torch.distributed's function (default: name)
    aliases: tuple[str, ...] = ()  # c10d's other names for the method (torch 2.14 renamed some)
    reduces: bool = False  # takes a ReduceOp: AVG runs as SUM and a division (Gloo has no AVG)
    root_only: bool = False  # the result lands on the root rank only (reduce)
    engine_names: tuple[str, ...] = ()  # the engine's method: the first it has (default: name)
    # For an engine that has none of engine_names: its method for one output/input pair, called
    # once per pair (see _one_by_one).
    emulated_by: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", self.label or self.name)
        object.__setattr__(self, "engine_names", self.engine_names or (self.name,))


# The collectives of the group, as c10d calls them; all_to_all (list form), barrier,
# monitored_barrier and receiving from any source are methods of their own (below).
COLLECTIVES: tuple[Collective, ...] = (
    Collective("allreduce", (("tensors", INOUT),), "AllreduceOptions", reduces=True),
    Collective("allreduce_coalesced", (("tensors", INOUT),), "AllreduceCoalescedOptions", reduces=True),
    Collective("broadcast", (("tensors", INOUT),), "BroadcastOptions"),
    Collective("reduce", (("tensors", INOUT),), "ReduceOptions", reduces=True, root_only=True),
    Collective("allgather", (("output_lists", OUT), ("inputs", IN)), "AllgatherOptions"),
    Collective("allgather_coalesced", (("output_lists", OUT), ("inputs", IN)), "AllgatherOptions"),
    Collective(
        "_allgather_base", (("output", OUT), ("input", IN)), "AllgatherOptions",
        label="all_gather_into_tensor", aliases=("all_gather_single",),
    ),
    Collective(
        "allgather_into_tensor_coalesced", (("outputs", OUT), ("inputs", IN)), "AllgatherOptions",
        aliases=("all_gather_single_coalesced",),
        engine_names=("all_gather_single_coalesced", "allgather_into_tensor_coalesced"),
        emulated_by="_allgather_base",
    ),
    Collective(
        "reduce_scatter", (("outputs", OUT), ("input_lists", IN)), "ReduceScatterOptions", reduces=True
    ),
    Collective(
        "_reduce_scatter_base", (("output", OUT), ("input", IN)), "ReduceScatterOptions", reduces=True,
        label="reduce_scatter_tensor", aliases=("reduce_scatter_single",),
    ),
    Collective(
        "reduce_scatter_tensor_coalesced", (("outputs", OUT), ("inputs", IN)), "ReduceScatterOptions",
        reduces=True, aliases=("reduce_scatter_single_coalesced",),
        engine_names=("reduce_scatter_single_coalesced", "reduce_scatter_tensor_coalesced"),
        emulated_by="_reduce_scatter_base",
    ),
    Collective(
        "alltoall_base",
        (("output", OUT), ("input", IN), ("output_split_sizes", PLAIN), ("input_split_sizes", PLAIN)),
        "AllToAllOptions",
        label="all_to_all_single", aliases=("all_to_all_single",),
    ),
    Collective("gather", (("output_lists", OUT), ("inputs", IN)), "GatherOptions"),
    Collective("scatter", (("outputs", OUT), ("input_lists", IN)), "ScatterOptions"),
    Collective("send", (("tensors", IN), ("dst", PLAIN), ("tag", PLAIN)), None),
    Collective("recv", (("tensors", OUT), ("src", PLAIN), ("tag", PLAIN)), None),
)


def _stage(staged: _Staged, staging: Staging, value: Any) -> Any:
    """``value`` (a tensor, or lists of them) as the engine gets it: its tensors staged."""
    if staging is PLAIN:
        return value
    if isinstance(value, torch.Tensor):
        return staged.host(value, read=staging in (IN, INOUT), write=staging in (OUT, INOUT))
    return [_stage(staged, staging, item) for item in value]


def _tensors_of(
    collective: Collective, values: Sequence[Any], stagings: tuple[Staging, ...]
) -> list[torch.Tensor]:
    """The tensors of the arguments ``values`` of ``collective`` staged as one of ``stagings``."""
    found: list[torch.Tensor] = []

    def collect(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            found.append(value)
        else:
            for item in value:
                collect(item)

    for (_, staging), value in zip(collective.params, values, strict=True):
        if staging in stagings:
            collect(value)
    return found


def _collective_method(collective: Collective) -> Callable[..., dist.Work]:
    """The group's method for ``collective``: c10d's signature, run by
    CollectiveProcessGroup._collective."""
    parameter = functools.partial(inspect.Parameter, kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = [parameter("self"), *(parameter(name) for name, _ in collective.params)]
    if collective.options is not None:
        parameters.append(parameter("opts", default=None))
    signature = inspect.Signature(parameters)
    arity = len(parameters) - 1

    def method(self: CollectiveProcessGroup, *args: Any, **kwargs: Any) -> dist.Work:
        if kwargs or len(args) != arity:  # else c10d's own call: every argument, in order
            args = signature.bind(self, *args, **kwargs).args[1:]  # TypeError as a def raises
        return self._collective(collective, args)

    method.__name__ = collective.name
    method.__qualname__ = f"CollectiveProcessGroup.{collective.name}"
    method.__doc__ = f"c10d's ``{collective.name}`` ({collective.label}): see COLLECTIVES."
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


def _add_collective_methods(cls: type[CollectiveProcessGroup]) -> type[CollectiveProcessGroup]:
    """Give the class a method, under each of its names, for each collective of COLLECTIVES."""
    for collective in COLLECTIVES:
        method = _collective_method(collective)
        for name in (collective.name, *collective.aliases):
            setattr(cls, name, method)
    return cls


@_add_collective_methods
class CollectiveProcessGroup(dist.ProcessGroup):
    """c10d process group of the device: Gloo on host views of device memory (see module
    docstring for the design and for replacing Gloo)."""

    def __init__(
        self,
        store: Store,
        rank: int,
        size: int,
        timeout: datetime.timedelta,
        *,
        device_name: str,
    ) -> None:
        # c10d has this form; torch 2.14's stub lacks it, 2.15's has it.
        super().__init__(rank, size)  # type: ignore[call-arg, unused-ignore]
        self.device_name = device_name
        self.memory_mode = _memory_mode(device_name)
        self._engine = _engine(store, rank, size, timeout)
        self._completion_streams: dict[torch.device, torch.Stream] = {}
        # c10d looks up a group's per-device backend for capabilities (batch_isend_irecv asks
        # `supports_coalescing`, for instance): answer with the engine. Collectives still come
        # here first: Python callers and C++ callers (DDP's reducer) both reach the methods below.
        for device_type in ("cpu", device_name):
            self._register_backend(
                torch.device(device_type), dist.ProcessGroup.BackendType.CUSTOM, self._engine
            )
        # ... and as the group's default backend, which c10d asks for the group's name (torch
        # 2.15's flight recorder, attached to every group, does so at init_process_group).
        self._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)

    # --- identity ------------------------------------------------------------------------------

    def getBackendName(self) -> str:  # c10d's name for it
        return backend_name(self.device_name)

    def name(self) -> str:
        return self.getBackendName()

    def shutdown(self) -> None:
        """Called by ``destroy_process_group``: returns once the engine's threads need Python no
        more for this process's collectives (see _Handoffs), so that the program can end."""
        if not _handoffs.settle(_SETTLE_TIMEOUT_S):
            warnings.warn(
                f"{self.getBackendName()}: collectives still in flight at destroy_process_group "
                f"after {_SETTLE_TIMEOUT_S:.0f} s; the process may abort when it exits",
                RuntimeWarning,
                stacklevel=2,
            )
        super().shutdown()

    # --- machinery -----------------------------------------------------------------------------

    def _staged(self) -> _Staged:
        return _Staged(self.device_name, self.memory_mode)

    def _run(
        self,
        op: str,
        staged: _Staged,
        start: Callable[[], Any],
        results: Sequence[torch.Tensor],
        after: Callable[[], None] | None = None,
    ) -> dist.Work:
        """Synchronise the device streams of the tensors ``staged`` has mapped, ``start`` the
        engine's work; return a Work whose future completes, with ``results``, once the engine
        is done, the staged results copied back and ``after`` run."""
        staged.synchronize()
        engine_work = start()
        devices = sorted(staged.devices, key=str)
        if not devices and after is None:
            if _own_future(engine_work) is not None:  # else the caller waits for it, on its thread
                _handoffs.keep(engine_work)
            cpu_work: dist.Work = engine_work
            return cpu_work  # CPU tensors, nothing to finish: Gloo's work as it is
        result_list = list(results)
        future_devices: list[int | str | torch.device] = list(devices)
        future: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future(devices=future_devices)
        # Device work after the engine (copies back, AVG's division) runs on the group's own
        # streams, not behind whatever the current streams wait for (other collectives).
        streams = [self._completion_stream(device) for device in devices]

        def done(engine_future: torch.futures.Future[Any]) -> None:
            with _current_streams(streams):
                try:
                    engine_future.value()  # raises the engine's error, e.g. a peer that died
                    staged.finish()
                    if after is not None:
                        after()
                    for stream in streams:  # done before the gated streams go on
                        stream.synchronize()
                except Exception as error:  # noqa: BLE001 -- handed to whoever waits
                    failure = RuntimeError(f"{self.getBackendName()} {op} failed: {error}")
                    future.set_exception(failure)  # type: ignore[arg-type]  # its stub wants a result
                    return
                future.set_result(result_list)

        # The engine's work alone delivers the results when nothing runs after it: then a
        # wait() can hand it to the device streams instead of blocking the host, if the work
        # may be waited on again (it has its own future). A _FutureWork (coalesced collectives
        # emulated one by one) completes in Python: it cannot.
        delivers = (
            after is None
            and not staged.copy_back
            and not isinstance(engine_work, _FutureWork)
            and _own_future(engine_work) is not None
        )
        _when_done(engine_work, done)
        return _FutureWork(
            future, devices, f"{self.getBackendName()} {op}", engine_work if delivers else None
        )

    def _completion_stream(self, device: torch.device) -> torch.Stream:
        stream = self._completion_streams.get(device)
        if stream is None:
            stream = self._completion_streams[device] = torch.Stream(device=device)
        return stream

    # --- collectives ---------------------------------------------------------------------------
    # The collectives of COLLECTIVES are methods of this class made by _add_collective_methods;
    # the ones below are those that do more than stage their tensors and call the engine.

    def _collective(self, collective: Collective, args: Sequence[Any]) -> dist.Work:
        """Run ``collective`` on ``args``, its arguments in the order of ``collective.params``
        then, if it takes options, the options (None: the defaults)."""
        values = args[: len(collective.params)]
        written = _tensors_of(collective, values, (OUT, INOUT))
        engine_opts: Any = None
        after: Callable[[], None] | None = None
        if collective.options is not None:
            options_type = getattr(dist.distributed_c10d, collective.options)
            opts = args[len(collective.params)] if len(args) > len(collective.params) else None
            opts = opts if opts is not None else options_type()
            engine_opts = opts
            if collective.reduces:
                engine_opts, after = self._reduce_op(collective.label, opts, written, options_type)
            if collective.root_only:
                if after is not None:
                    engine_opts.rootRank, engine_opts.rootTensor = opts.rootRank, opts.rootTensor
                if self.rank() != opts.rootRank:
                    after = None  # the other ranks have no result to divide
        method = self._engine_method(collective)
        s = self._staged()
        engine_args = [
            _stage(s, staging, value)
            for (_, staging), value in zip(collective.params, values, strict=True)
        ]
        if collective.options is not None:
            engine_args.append(engine_opts)
        # A rank that writes nothing (a sender, gather off the root) completes with what it read.
        results = written or _tensors_of(collective, values, (IN,))
        return self._run(collective.label, s, functools.partial(method, *engine_args), results, after)

    def _engine_method(self, collective: Collective) -> Callable[..., Any]:
        """The engine's method for ``collective``: the first of its engine names the engine has,
        else its emulation by the single-tensor form, else (no such method) AttributeError."""
        for name in collective.engine_names:
            method: Callable[..., Any] | None = getattr(self._engine, name, None)
            if method is not None:
                return method
        if collective.emulated_by is not None:
            return _one_by_one(getattr(self._engine, collective.emulated_by))
        missing: Callable[..., Any] = getattr(self._engine, collective.engine_names[0])  # raises
        return missing

    def alltoall(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        """Gloo has no list all_to_all: pack the inputs into one buffer, run Gloo's
        all_to_all_single, unpack into the outputs when it is done."""
        opts = opts if opts is not None else dist.AllToAllOptions()
        if len({t.dtype for t in [*outputs, *inputs]}) > 1:
            raise _unsupported("all_to_all", self.device_name, "tensors of different dtypes")
        packed_input = torch.cat([t.reshape(-1) for t in inputs])
        packed_output = torch.empty(
            sum(t.numel() for t in outputs), dtype=packed_input.dtype, device=packed_input.device
        )
        output_splits = [t.numel() for t in outputs]
        input_splits = [t.numel() for t in inputs]

        def unpack() -> None:
            for out, part in zip(outputs, packed_output.split(output_splits), strict=True):
                out.copy_(part.view(out.shape))

        s = self._staged()

        return self._run(
            "all_to_all",
            s,
            functools.partial(self._engine.alltoall_base,
                s.output(packed_output), s.input(packed_input), output_splits, input_splits, opts
            ),
            outputs,
            unpack,
        )

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int) -> dist.Work:
        # The caller reads the sender's rank from Gloo's own work object, so only a receive
        # straight into (aliased) memory can be handed back as it is.
        if self.memory_mode != "host_view" and any(t.device.type != "cpu" for t in tensors):
            raise _unsupported("recv from any source", self.device_name, "in staging mode")
        staged = _Staged(self.device_name, self.memory_mode)
        host = [staged.output(t) for t in tensors]
        staged.synchronize()
        work: dist.Work = self._engine.recv_anysource(host, tag)
        return work

    def barrier(self, opts: Any = None) -> dist.Work:
        work: dist.Work = self._engine.barrier(opts if opts is not None else dist.BarrierOptions())
        return work

    def monitored_barrier(
        self, timeout: datetime.timedelta | None = None, wait_all_ranks: bool = False
    ) -> None:
        if timeout is None:
            self._engine.monitored_barrier(wait_all_ranks=wait_all_ranks)
        else:
            self._engine.monitored_barrier(timeout, wait_all_ranks)

    def allreduce_sparse(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        raise _unsupported("allreduce_sparse", self.device_name)

    # --- reductions ----------------------------------------------------------------------------

    def _reduce_op(
        self, op: str, opts: Any, outputs: Sequence[torch.Tensor], options_type: Any
    ) -> tuple[Any, Callable[[], None] | None]:
        """Gloo has no AVG: run SUM and divide by the group size when the work is done.
        PREMUL_SUM (NCCL's pre-scaled sum) has no Gloo counterpart."""
        reduce_op = opts.reduceOp
        if reduce_op == dist.ReduceOp.AVG:
            if any(not (t.is_floating_point() or t.is_complex()) for t in outputs):
                raise _unsupported(f"{op} with ReduceOp.AVG", self.device_name, "integer tensors")
            engine_opts = options_type()
            engine_opts.reduceOp = dist.ReduceOp.SUM
            engine_opts.timeout = opts.timeout
            size = self.size()

            def divide() -> None:
                for t in outputs:
                    t.div_(size)

            return engine_opts, divide
        if reduce_op == dist.ReduceOp.PREMUL_SUM:
            raise _unsupported(f"{op} with ReduceOp.PREMUL_SUM", self.device_name)
        return opts, None


def _one_by_one(
    single: Callable[[torch.Tensor, torch.Tensor, Any], Any],
) -> Callable[[list[torch.Tensor], list[torch.Tensor], Any], _FutureWork]:
    """The coalesced form of a collective for an engine that lacks it (Gloo before torch 2.12
    has neither allgather_into_tensor_coalesced nor reduce_scatter_tensor_coalesced, and FSDP2
    calls both): one call of ``single`` per output/input pair. Every rank issues the same calls
    in the same order, which is all the engine needs to match them; the work completes when the
    last one has, and fails with the first error."""

    def coalesced(outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any) -> _FutureWork:
        if len(outputs) != len(inputs):
            raise ValueError(
                f"coalesced collective: {len(outputs)} outputs for {len(inputs)} inputs"
            )
        futures = [_future_of(single(out, inp, opts)) for out, inp in zip(outputs, inputs, strict=True)]

        def all_succeeded(done: torch.futures.Future[list[torch.futures.Future[Any]]]) -> None:
            for future in done.value():
                future.value()  # raises that collective's error

        _handoffs.follow(all_succeeded)
        return _FutureWork(torch.futures.collect_all(futures).then(all_succeeded))

    return coalesced


def _own_future(work: Any) -> torch.futures.Future[Any] | None:
    """The future of an engine's work, if it has one (Gloo's list reduce_scatter, send and recv
    have none)."""
    try:
        return work.get_future()  # type: ignore[no-any-return]
    except RuntimeError:  # "Work::getFuture not implemented"
        return None


class _Handoffs:
    """What the engine's threads may still need Python for after a collective's caller has
    been released, kept track of so that the program can end cleanly.

    The engine completes a collective on its own thread and runs the Python callback there
    (``done`` in CollectiveProcessGroup._run): the callback sets the future that releases the
    caller, and the engine's thread then takes the GIL once more to drop the callback. The
    engine's thread also drops its reference to the work just after completing it; when that is
    the last one, the work's tensors go with it, and tensors that Python let go of while the
    engine held them have their Python object kept alive by torch, owned by C++: freeing them
    takes the GIL too. A thread that waits for the GIL when the interpreter finalizes is ended
    by CPython with a forced unwind, which aborts the process at the first noexcept frame
    ("terminate called without an active exception", after the program's last line ran).

    So the callbacks are followed until the engine drops them, and Python keeps a reference to
    each work until the collective after the one at which it was seen complete: the engine's
    thread is done with it by then, so the last reference, and the freeing, is Python's.
    ``settle`` waits for all of it; destroy_process_group (``shutdown``) and the interpreter's
    exit call it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # collectives may start on several threads (autograd's)
        self._callbacks: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()
        # (work, the future of the thread that waits for it, if any): not seen complete yet,
        # and seen complete at the previous look (released at the next one).
        self._pending: list[tuple[Any, torch.futures.Future[Any] | None]] = []
        self._completed: list[tuple[Any, torch.futures.Future[Any] | None]] = []

    def keep(self, work: Any, waited_by: torch.futures.Future[Any] | None = None) -> None:
        """Keep ``work`` until it has completed: until ``work.is_completed()``, or for a work
        that does not say (Gloo's send and recv), until ``waited_by`` (the future of a thread
        that waits for it) is done."""
        with self._lock:
            released = self._look()
            self._pending.append((work, waited_by))
        del released  # outside the lock: freeing a work frees tensors, which may run Python

    def follow(self, callback: Callable[..., Any]) -> None:
        """Follow ``callback``, handed to the engine, until the engine drops it."""
        self._callbacks.add(callback)

    @staticmethod
    def _complete(entry: tuple[Any, torch.futures.Future[Any] | None]) -> bool:
        work, waited_by = entry
        return bool(waited_by.done() if waited_by is not None else work.is_completed())

    def _look(self) -> list[tuple[Any, torch.futures.Future[Any] | None]]:
        """Set aside the works complete now; return the ones seen complete at the previous
        look, for the caller to release. Called with the lock held."""
        pending: list[tuple[Any, torch.futures.Future[Any] | None]] = []
        completed: list[tuple[Any, torch.futures.Future[Any] | None]] = []
        for entry in self._pending:
            (completed if self._complete(entry) else pending).append(entry)
        released = self._completed
        self._pending, self._completed = pending, completed
        return released

    def settle(self, timeout_s: float) -> bool:
        """Wait, with the GIL released, until the engine's threads need Python no more; False
        if that takes longer than ``timeout_s`` (a collective that never completes)."""
        deadline = time.monotonic() + timeout_s
        while self._callbacks or not all(self._complete(entry) for entry in list(self._pending)):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
        with self._lock:
            held = self._pending + self._completed
            self._pending, self._completed = [], []
        if held:
            # Complete, but the engine's threads may not have dropped their own references yet:
            # give them the moment they need, so that ours is the last.
            time.sleep(_ENGINE_LET_GO_S)
            del held
        return True


_handoffs = _Handoffs()
# Bounds the waits at destroy_process_group and at exit, for a peer that never answers.
_SETTLE_TIMEOUT_S = 10.0
# How long an engine's thread takes from completing a work to dropping it: a few instructions,
# with a wide margin for a loaded machine.
_ENGINE_LET_GO_S = 0.05

# Completion threads (below) still running. A daemon thread that is still inside torch's C++
# code when the interpreter finalizes -- setting its future, running the callbacks -- is ended
# the same way (see _Handoffs).
_completion_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


@atexit.register
def _settle_at_exit() -> None:
    """atexit runs before finalization, while the engine's threads can still finish."""
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    for thread in list(_completion_threads):
        thread.join(max(0.0, deadline - time.monotonic()))
    _handoffs.settle(max(0.0, deadline - time.monotonic()))


def _future_of(work: Any) -> torch.futures.Future[Any]:
    """A future that completes with ``work``: its own, or one set by a thread that waits on the
    work (which is then that work's one waiter: a Gloo send or recv cannot be waited on twice)."""
    own = _own_future(work)
    if own is not None:
        _handoffs.keep(work)
        return own
    future: torch.futures.Future[Any] = torch.futures.Future()
    _handoffs.keep(work, waited_by=future)

    def wait() -> None:
        try:
            work.wait()
        except Exception as error:  # noqa: BLE001 -- handed to the future
            future.set_exception(error)
        else:
            future.set_result(None)

    thread = threading.Thread(target=wait, name="collective-completion", daemon=True)
    _completion_threads.add(thread)
    thread.start()
    return future


def _when_done(work: Any, callback: Callable[[torch.futures.Future[Any]], None]) -> None:
    """Run ``callback(future)`` once ``work`` completes."""
    _handoffs.follow(callback)
    _future_of(work).add_done_callback(callback)
