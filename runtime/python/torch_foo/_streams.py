"""Streams, events and device properties of ``torch.<device>`` (device-name agnostic).

The classes are ``torch.Stream`` / ``torch.Event`` whose device defaults to this
backend's current device, so they mix freely with ``torch.accelerator`` and with
code written for CUDA (``with torch.<device>.stream(s):``, ``s.wait_event(e)``,
``t.record_stream(s)``). The work itself runs on the driver's streams
(``runtime/driver``): asynchronous, in order per stream; ``SCAFFOLD_LAUNCH_BLOCKING=1``
runs everything synchronously for debugging.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import torch


class DeviceProperties(NamedTuple):
    name: str
    total_memory: int
    major: int
    minor: int
    multi_processor_count: int


def add_stream_api(mod: types.ModuleType, name: str, c: Any, index: Callable[[Any], int]) -> None:
    """Add the stream, event and device-property API to the device module ``mod``."""

    def _device(device: Any) -> torch.device:
        return torch.device(name, index(device))

    class Stream(torch.Stream):
        """A stream of this device (a ``torch.Stream``); new unless ids are given."""

        def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> Stream:
            if "stream_id" in kwargs:  # wrapping an existing stream
                return super().__new__(cls, **kwargs)
            return super().__new__(cls, device=_device(device), priority=priority)

    class Event:
        """An event of the current device: a plain ``torch.Event`` (torch's own methods, e.g.
        ``elapsed_time``, accept nothing else, not even a subclass)."""

        def __new__(  # type: ignore[misc]  # makes a torch.Event, not an instance of the class
            cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
        ) -> torch.Event:
            return torch.Event(
                device=_device(None),
                enable_timing=enable_timing,
                blocking=blocking,
                interprocess=interprocess,
            )

    def _wrap(stream: torch.Stream) -> Stream:
        return Stream(
            stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type
        )

    def current_stream(device: Any = None) -> Stream:
        """The calling thread's current stream on ``device``."""
        return _wrap(torch.accelerator.current_stream(_device(device)))

    def default_stream(device: Any = None) -> Stream:
        """The default stream of ``device`` (id 0)."""
        d = _device(device)
        return Stream(stream_id=0, device_index=d.index, device_type=current_stream(d).device_type)

    def set_stream(stream: torch.Stream) -> None:
        """Make ``stream`` current for its device on the calling thread."""
        torch.accelerator.set_stream(stream)

    class StreamContext:
        """``with torch.<device>.stream(s):`` -- ``s`` is current inside the block (None: no-op)."""

        def __init__(self, stream: torch.Stream | None):
            self.stream = stream
            self.previous: torch.Stream | None = None

        def __enter__(self) -> torch.Stream | None:
            if self.stream is not None:
                self.previous = torch.accelerator.current_stream(
                    torch.device(name, self.stream.device_index)
                )
                torch.accelerator.set_stream(self.stream)
            return self.stream

        def __exit__(self, *exc: object) -> Literal[False]:
            if self.previous is not None:
                torch.accelerator.set_stream(self.previous)
            return False

    def stream(stream: torch.Stream | None) -> StreamContext:
        return StreamContext(stream)

    def get_device_properties(device: Any = None) -> DeviceProperties:
        return DeviceProperties(*c.get_device_properties(index(device)))

    def get_device_capability(device: Any = None) -> tuple[int, int]:
        props = get_device_properties(device)
        return (props.major, props.minor)

    def get_device_name(device: Any = None) -> str:
        return get_device_properties(device).name

    def launch_blocking() -> bool:
        """True when ``SCAFFOLD_LAUNCH_BLOCKING=1``: every stream runs synchronously."""
        return bool(c.launch_blocking())

    def _pause_stream_for_testing(stream: torch.Stream, paused: bool) -> None:
        """Tests only: a paused stream queues work but runs none of it."""
        c._pause_stream_for_testing(stream.device_index, stream.stream_id, paused)

    for obj in (
        Stream, Event, StreamContext, current_stream, default_stream, set_stream, stream,
        get_device_properties, get_device_capability, get_device_name, launch_blocking,
        _pause_stream_for_testing,
    ):
        obj.__module__ = mod.__name__
        setattr(mod, obj.__name__, obj)
    vars(mod)["DeviceProperties"] = DeviceProperties
