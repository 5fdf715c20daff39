"""Device graphs on ``torch.<device>`` (device-name agnostic): capture a stream's work once and
replay it without the host, with ``torch.cuda``'s names and semantics.

* ``<Device>Graph`` (``FooGraph`` for ``foo``): ``torch.accelerator.Graph`` on this device (the
  runtime registers its implementation, ``csrc/graphs/``), with ``CUDAGraph``'s signatures:
  ``capture_begin(pool=None, capture_error_mode="global")``, ``capture_end``, ``instantiate``,
  ``replay``, ``reset``, ``pool``, ``enable_debug_mode``, ``debug_dump``;
* ``graph(g, pool=None, stream=None, capture_error_mode="global")``: the context manager that
  captures on a side stream (after synchronising and emptying the cache, as CUDA's does);
* ``make_graphed_callables``: callables (modules or functions) whose forward and backward run as
  replays of graphs captured from sample arguments;
* ``graph_pool_handle()`` and ``is_current_stream_capturing()``.

Captured work replays with the values it was captured with: new data goes into the captured (static)
input tensors with ``copy_`` before ``replay()``. What cannot be captured -- a host
synchronisation (``.item()``, ``.cpu()``, ``synchronize()``), the CPU fallback, random numbers --
raises during the capture, naming the op.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

CaptureErrorMode = Literal["default", "global", "thread_local", "relaxed"]


def graph_class_name(name: str) -> str:
    """``foo`` -> ``FooGraph``, ``my_npu`` -> ``MyNpuGraph``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Graph"


def add_graph_api(mod: types.ModuleType, name: str, c: Any, index: Callable[[Any], int]) -> None:
    """Add the graph API to the device module ``mod`` (after its stream API, which it uses)."""
    available = bool(c._register_graph_impl()) and hasattr(torch.accelerator, "Graph")
    graph_type = _make_graph_class(mod, name, available)
    default_capture_streams: dict[int, torch.Stream] = {}

    class graph:
        """Captures the work of its block into ``graph_`` (a ``<Device>Graph``) on ``stream`` (by
        default a side stream kept for captures), as ``torch.cuda.graph``: the device is
        synchronised, garbage collected and its cache emptied first. ``pool`` is another graph's
        ``pool()`` or a ``graph_pool_handle()`` to share memory with. When the block raises, the
        capture is abandoned and the block's error is the one raised."""

        def __init__(
            self,
            graph_: Any,
            pool: tuple[int, int] | None = None,
            stream: torch.Stream | None = None,
            capture_error_mode: CaptureErrorMode = "global",
        ) -> None:
            if stream is None:
                device = index(None)
                if device not in default_capture_streams:
                    default_capture_streams[device] = mod.Stream(device)
                stream = default_capture_streams[device]
            self.graph = graph_
            self.pool = pool
            self.capture_stream = stream
            self.capture_error_mode: CaptureErrorMode = capture_error_mode
            self._stream_context = mod.stream(stream)

        def __enter__(self) -> None:
            mod.synchronize()
            gc.collect()
            mod.empty_cache()
            self._stream_context.__enter__()
            try:
                self.graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
            except BaseException:
                self._stream_context.__exit__(None, None, None)
                raise

        def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
            try:
                if exc_type is None:
                    self.graph.capture_end()
                else:
                    # The block's error explains the failure; the capture is dropped.
                    self.graph.reset()
            finally:
                self._stream_context.__exit__(exc_type, exc, traceback)

    def graph_pool_handle() -> tuple[int, int]:
        """A memory pool id to pass as ``pool`` to several graphs, which then share memory."""
        first, second = c.graph_pool_handle()
        return (int(first), int(second))

    def is_current_stream_capturing() -> bool:
        """True when the current stream of the current device is being captured into a graph."""
        return bool(c.is_current_stream_capturing(-1))

    def make_graphed_callables(
        callables: Any,
        sample_args: Any,
        num_warmup_iters: int = 3,
        allow_unused_input: bool = False,
        pool: tuple[int, int] | None = None,
    ) -> Any:
        """Graphed versions of ``callables`` (a callable or a tuple of them: modules or functions),
        as ``torch.cuda.make_graphed_callables``: each one's forward and backward are captured from
        ``sample_args`` (a tuple of tensors per callable) after ``num_warmup_iters`` eager runs on a
        side stream, and later calls copy their arguments into the captured inputs and replay. A
        module's forward is replaced (the graphs run while its ``training`` flag is what it was
        at capture) and the module returned."""
        return _make_graphed_callables(
            mod, graph, graph_type, graph_pool_handle,
            callables, sample_args, num_warmup_iters, allow_unused_input, pool,
        )

    for function in (graph_pool_handle, is_current_stream_capturing, make_graphed_callables):
        function.__module__ = mod.__name__
        setattr(mod, function.__name__, function)
    graph.__module__ = mod.__name__
    graph.__qualname__ = "graph"
    vars(mod).update({"graph": graph, graph_class_name(name): graph_type})


def _make_graph_class(mod: types.ModuleType, name: str, available: bool) -> type:
    class_name = graph_class_name(name)
    if not available:

        class Unavailable:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                raise RuntimeError(
                    f"{class_name} needs torch.accelerator.Graph (torch 2.14 or later) and a driver "
                    f"with stream capture; this torch is {torch.__version__}"
                )

        Unavailable.__name__ = Unavailable.__qualname__ = class_name
        Unavailable.__module__ = mod.__name__
        return Unavailable

    base = cast(type, torch.accelerator.Graph)

    class DeviceGraph(base):  # type: ignore[misc,valid-type]
        """A graph of this device's work: ``torch.accelerator.Graph`` with ``torch.cuda.CUDAGraph``'s
        signatures. ``keep_graph=True`` keeps the captured graph after ``capture_end`` (then
        ``instantiate`` or the first ``replay`` makes it executable)."""

        def __new__(cls, keep_graph: bool = False) -> Any:
            return super().__new__(cls, keep_graph)

        def __init__(self, keep_graph: bool = False) -> None:
            super().__init__(keep_graph)

        def capture_begin(
            self, pool: tuple[int, int] | None = None, capture_error_mode: CaptureErrorMode = "global"
        ) -> None:
            """Begin capturing the current stream's work; ``pool`` shares another graph's memory."""
            torch._C._acceleratorGraph.capture_begin(self, pool=pool, capture_error_mode=capture_error_mode)

        def debug_dump(self, debug_path: str) -> None:
            """Write the captured graph (Graphviz dot) to ``debug_path``; needs
            ``enable_debug_mode()`` before the capture, or ``keep_graph=True``."""
            torch._C._acceleratorGraph.debug_dump(self, debug_path)

    DeviceGraph.__name__ = DeviceGraph.__qualname__ = class_name
    DeviceGraph.__module__ = mod.__name__
    return DeviceGraph


def _make_graphed_callables(
    mod: types.ModuleType,
    graph: Any,
    graph_type: type,
    graph_pool_handle: Callable[[], tuple[int, int]],
    callables: Any,
    sample_args: Any,
    num_warmup_iters: int,
    allow_unused_input: bool,
    pool: tuple[int, int] | None,
) -> Any:
    just_one = not isinstance(callables, tuple)
    all_callables: tuple[Any, ...] = (callables,) if just_one else callables
    all_args: tuple[tuple[torch.Tensor, ...], ...] = (sample_args,) if just_one else sample_args
    if len(all_callables) != len(all_args):
        raise ValueError("make_graphed_callables: one tuple of sample arguments per callable is needed")
    for fn, args in zip(all_callables, all_args, strict=True):
        if not isinstance(args, tuple) or not all(isinstance(a, torch.Tensor) for a in args):
            raise TypeError("make_graphed_callables: sample arguments must be tuples of tensors")
        if isinstance(fn, torch.nn.Module):
            hooks = (fn._backward_hooks, fn._forward_hooks, fn._forward_pre_hooks)
            if any(len(h) > 0 for h in hooks):
                raise RuntimeError("make_graphed_callables: modules must have no hooks (they would not be replayed)")
            if any(p.device.type != a.device.type for p in fn.parameters() for a in args[:1]):
                raise RuntimeError(
                    "make_graphed_callables: a module's parameters must be on the device of its arguments"
                )

    params = [tuple(fn.parameters()) if isinstance(fn, torch.nn.Module) else () for fn in all_callables]
    inputs = [args + p for args, p in zip(all_args, params, strict=True)]
    grad_inputs = [tuple(t for t in ins if t.requires_grad) for ins in inputs]
    shared_pool = graph_pool_handle() if pool is None else pool

    def run_backward(
        outputs: Sequence[torch.Tensor], wanted: tuple[torch.Tensor, ...], grads: Sequence[torch.Tensor]
    ) -> Any:
        return torch.autograd.grad(
            tuple(outputs), wanted, grad_outputs=tuple(grads), only_inputs=True, allow_unused=allow_unused_input
        )

    # Warm-up on a side stream: lazy initialisations (and the allocator's first segments) happen
    # outside the capture.
    mod.synchronize()
    with mod.stream(mod.Stream()):
        for fn, args, wanted in zip(all_callables, all_args, grad_inputs, strict=True):
            for _ in range(num_warmup_iters):
                outputs = [o for o in tree_flatten(fn(*args))[0] if isinstance(o, torch.Tensor) and o.requires_grad]
                if outputs and wanted:
                    run_backward(outputs, wanted, [torch.empty_like(o) for o in outputs])
                del outputs
    mod.synchronize()

    # Forwards in order, then backwards in reverse order (as a backward pass runs them), all in
    # one pool.
    forward_graphs = [graph_type() for _ in all_callables]
    backward_graphs = [graph_type() for _ in all_callables]
    static_outputs: list[tuple[torch.Tensor, ...]] = []
    output_specs: list[Any] = []
    for fn, args, forward_graph in zip(all_callables, all_args, forward_graphs, strict=True):
        with graph(forward_graph, pool=shared_pool):
            result = fn(*args)
        flat, spec = tree_flatten(result)
        if not all(isinstance(o, torch.Tensor) for o in flat):
            raise TypeError("make_graphed_callables: a callable must return tensors (or nested tuples of them)")
        static_outputs.append(tuple(flat))
        output_specs.append(spec)

    static_grad_outputs: list[tuple[torch.Tensor | None, ...]] = [()] * len(all_callables)
    static_grad_inputs: list[tuple[torch.Tensor | None, ...]] = [()] * len(all_callables)
    for i in reversed(range(len(all_callables))):
        grad_outputs = tuple(torch.empty_like(o) if o.requires_grad else None for o in static_outputs[i])
        differentiable = [o for o in static_outputs[i] if o.requires_grad]
        grads: Sequence[torch.Tensor | None] = ()
        if differentiable and grad_inputs[i]:
            with graph(backward_graphs[i], pool=shared_pool):
                grads = run_backward(differentiable, grad_inputs[i], [g for g in grad_outputs if g is not None])
        # One gradient (or None) per input and parameter, in order.
        by_input: list[torch.Tensor | None] = []
        produced = iter(grads)
        for t in inputs[i]:
            by_input.append(next(produced, None) if t.requires_grad else None)
        static_grad_outputs[i] = grad_outputs
        static_grad_inputs[i] = tuple(by_input)

    graphed = [
        _graphed(
            forward_graphs[i], backward_graphs[i] if static_grad_inputs[i] and any(
                g is not None for g in static_grad_inputs[i]) else None,
            all_args[i], static_outputs[i], output_specs[i], static_grad_outputs[i], static_grad_inputs[i], params[i],
        )
        for i in range(len(all_callables))
    ]
    results: list[Any] = []
    for fn, run in zip(all_callables, graphed, strict=True):
        if isinstance(fn, torch.nn.Module):
            results.append(_replace_forward(fn, run))
        else:
            results.append(run)
    return results[0] if just_one else tuple(results)


def _graphed(
    forward_graph: Any,
    backward_graph: Any | None,
    static_args: tuple[torch.Tensor, ...],
    static_outputs: tuple[torch.Tensor, ...],
    output_spec: Any,
    static_grad_outputs: tuple[torch.Tensor | None, ...],
    static_grad_inputs: tuple[torch.Tensor | None, ...],
    params: tuple[torch.nn.Parameter, ...],
) -> Callable[..., Any]:
    """One callable's forward and backward as an autograd function replaying the graphs."""
    count = len(static_args)

    class Replayed(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *new_inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
            for static, new in zip(static_args, new_inputs[:count], strict=True):
                if static.data_ptr() != new.data_ptr():
                    static.copy_(new)
            forward_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
            if backward_graph is None:
                return tuple(None for _ in static_grad_inputs)
            for static, grad in zip(static_grad_outputs, grads, strict=True):
                if static is not None and grad is not None and static.data_ptr() != grad.data_ptr():
                    static.copy_(grad)
            backward_graph.replay()
            return tuple(g.detach() if g is not None else None for g in static_grad_inputs)

    def run(*args: torch.Tensor) -> Any:
        if len(args) != count:
            raise TypeError(f"the graphed callable takes {count} tensor arguments, got {len(args)}")
        outputs = Replayed.apply(*args, *params)
        return tree_unflatten(list(outputs), output_spec)

    return run


def _replace_forward(module: torch.nn.Module, run: Callable[..., Any]) -> torch.nn.Module:
    """The module runs the graphs while its training flag is the one it was captured with."""
    captured_training = module.training
    eager_forward = module.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        if module.training == captured_training and not kwargs:
            return run(*args)
        return eager_forward(*args, **kwargs)

    module.forward = forward
    return module
