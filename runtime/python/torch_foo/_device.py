"""Wire a compiled backend runtime into PyTorch (device-name agnostic).

``install(device_name, package_name)`` does, in order:

1. refuse to proceed if PrivateUse1 already belongs to another backend
   (PyTorch supports one PrivateUse1 backend per process) -- *before* the
   compiled module is loaded, so the other backend's registrations stay
   intact;
2. import ``<package_name>._C``, which loads the runtime's registrations and
   the backend's kernels (they live in the same shared object);
3. rename PrivateUse1 to ``device_name``;
4. register ``torch.<device_name>`` (device count, seeding, memory stats,
   streams, graphs, ...) and the device's torch.accelerator.Graph;
5. generate ``Tensor.<device_name>()``, ``Tensor.is_<device_name>``,
   ``Module.<device_name>()`` and the storage methods.

Every step is idempotent: installing twice is a no-op.
"""

from __future__ import annotations

import importlib
import threading
import types
from collections.abc import Callable
from typing import Any, Literal

import torch
from torch.utils.backend_registration import (
    generate_methods_for_privateuse1_backend,
    rename_privateuse1_backend,
)

from . import _convolution_layout
from ._graphs import add_graph_api
from ._memory import add_memory_api
from ._streams import add_stream_api

_DEFAULT_PRIVATEUSE1_NAME = "privateuseone"
_lock = threading.Lock()
_installed: dict[str, types.ModuleType] = {}


class PrivateUse1ConflictError(RuntimeError):
    """Another backend already owns PrivateUse1 in this process.

    The autoload entry point (``_<package>_autoload.py``) turns exactly this
    error into a warning, so two installed backends do not break
    ``import torch``; an explicit ``import <package>`` still raises it."""

    privateuse1_conflict = True


def check_privateuse1_available(device_name: str, package_name: str) -> None:
    """Raise PrivateUse1ConflictError if another backend owns PrivateUse1."""
    current = torch._C._get_privateuse1_backend_name()
    if current not in (_DEFAULT_PRIVATEUSE1_NAME, device_name):
        raise PrivateUse1ConflictError(
            f"Cannot load backend '{device_name}' (package {package_name}): "
            f"PrivateUse1 is already used by backend '{current}'. PyTorch "
            "supports only one PrivateUse1 backend per process. Uninstall one "
            f"of '{current}' and '{device_name}', or set "
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import the one you want."
        )


def install(device_name: str, package_name: str) -> types.ModuleType:
    """Install the backend and return its compiled ``_C`` module."""
    with _lock:
        if device_name in _installed:
            return _installed[device_name]
        check_privateuse1_available(device_name, package_name)
        try:
            c_module = importlib.import_module(f"{package_name}._C")
        except ImportError as err:
            if "PrivateUse1" not in str(err):
                raise  # a broken build, not a conflict: never soften it
            # The runtime found PrivateUse1 registered by a backend that did
            # not rename it; name both sides.
            raise PrivateUse1ConflictError(
                f"Cannot load backend '{device_name}' (package {package_name}): {err}"
            ) from err
        if torch._C._get_privateuse1_backend_name() == _DEFAULT_PRIVATEUSE1_NAME:
            rename_privateuse1_backend(device_name)
        _register_device_module(device_name, _make_device_module(device_name, c_module))
        _convolution_layout.install(device_name)
        if not hasattr(torch.Tensor, device_name):
            generate_methods_for_privateuse1_backend(
                for_tensor=True, for_module=True, for_storage=True
            )
        _installed[device_name] = c_module
        return c_module


def _register_device_module(device_name: str, module: types.ModuleType) -> None:
    existing = getattr(torch, device_name, None)
    if existing is None:
        torch._register_device_module(device_name, module)
    elif getattr(existing, "_scaffold_device_module", False) is not True:
        raise RuntimeError(
            f"torch.{device_name} already exists ({existing!r}); cannot register "
            f"the '{device_name}' device module"
        )


def _make_device_module(name: str, c: Any) -> types.ModuleType:
    """Build the ``torch.<name>`` module around the compiled functions ``c`` (the ``_C``
    module), one concern at a time."""
    mod = types.ModuleType(f"torch.{name}", f"Runtime API of the '{name}' device.")
    vars(mod)["_scaffold_device_module"] = True
    index = _device_index(name, c)
    _add_device_api(mod, c, index)
    _add_rng_api(mod, c, index)
    _add_memory_stats_api(mod, c, index)
    _add_fallback_counts(mod, name)
    _add_amp(mod, name)
    add_stream_api(mod, name, c, index)
    add_memory_api(mod, name, c, index)  # after _add_memory_stats_api: torch.<name>.memory has both
    add_graph_api(mod, name, c, index)  # after add_stream_api (captures on a side stream); after the rename
    _add_inductor_codegen(mod, name)
    c._register_aot_inductor_runner()  # aoti_load_package finds the device's models by its name
    return mod


def _export(mod: types.ModuleType, *functions: Callable[..., Any]) -> None:
    """Make ``functions`` attributes of ``mod`` under their names, belonging to it."""
    for function in functions:
        function.__module__ = mod.__name__
        setattr(mod, function.__name__, function)


def _device_index(name: str, c: Any) -> Callable[[Any], int]:
    """The function that reads a device index from what torch.<name>'s functions take."""

    def index(device: Any = None) -> int:
        """Device index from None (current), an int, 'name:i' or torch.device."""
        if device is None:
            return int(c.current_device())
        if isinstance(device, int):
            return device
        if isinstance(device, str):
            device = torch.device(device)
        if isinstance(device, torch.device):
            if device.type != name:
                raise ValueError(f"expected a '{name}' device, got '{device}'")
            return int(c.current_device()) if device.index is None else device.index
        raise TypeError(f"expected a device index, string or torch.device, got {device!r}")

    return index


def _add_device_api(mod: types.ModuleType, c: Any, index: Callable[[Any], int]) -> None:
    """Devices: how many, which is current, waiting for one."""

    def is_available() -> bool:
        return bool(c.device_count() > 0)

    def set_device(device: Any) -> None:
        c.set_device(index(device))

    def synchronize(device: Any = None) -> None:
        c.synchronize(index(device))

    class device:
        """Context manager making ``idx`` the current device inside the block."""

        def __init__(self, idx: Any):
            self.idx = -1 if idx is None else index(idx)
            self.prev = -1

        def __enter__(self) -> device:
            self.prev = c.current_device()
            if self.idx != -1:
                c.set_device(self.idx)
            return self

        def __exit__(self, *exc: object) -> Literal[False]:
            c.set_device(self.prev)
            return False

    _export(mod, is_available, set_device, synchronize, device)
    vars(mod).update(
        device_count=c.device_count, current_device=c.current_device, is_initialized=lambda: True
    )


def _checked_seed(seed: Any) -> int:
    value = int(seed)
    if not -(2**63) <= value < 2**64:
        raise ValueError(f"seed must be within [-2**63, 2**64), got {value}")
    return value


def _add_rng_api(mod: types.ModuleType, c: Any, index: Callable[[Any], int]) -> None:
    """Random numbers: seeds and generator states, per device and for all of them."""

    def manual_seed(seed: Any) -> None:
        c.manual_seed(-1, _checked_seed(seed))

    def manual_seed_all(seed: Any) -> None:
        seed = _checked_seed(seed)
        for i in range(c.device_count()):
            c.manual_seed(i, seed)

    def seed() -> int:
        return int(c.seed(-1))

    def seed_all() -> None:
        # Like CUDA: one random seed, applied to every device.
        value = c.seed(-1)
        for i in range(c.device_count()):
            c.manual_seed(i, value)

    def initial_seed() -> int:
        return int(c.initial_seed(-1))

    def get_rng_state(device: Any = None) -> torch.Tensor:
        data = bytearray(c.get_rng_state(index(device)))
        return torch.frombuffer(data, dtype=torch.uint8)

    def set_rng_state(new_state: torch.Tensor, device: Any = None) -> None:
        state = new_state.detach().to("cpu", torch.uint8).contiguous()
        c.set_rng_state(index(device), bytes(state.tolist()))

    def get_rng_state_all() -> list[torch.Tensor]:
        return [get_rng_state(i) for i in range(c.device_count())]

    def set_rng_state_all(new_states: Any) -> None:
        for i, state in enumerate(new_states):
            set_rng_state(state, i)

    def _is_in_bad_fork() -> bool:
        # True in a child forked after the parent used device memory: the
        # child would share the parent's device pages, so (as with CUDA) it
        # must not use the device. torch.manual_seed checks this.
        return bool(c.in_bad_fork())

    _export(
        mod,
        manual_seed, manual_seed_all, seed, seed_all, initial_seed,
        get_rng_state, set_rng_state, get_rng_state_all, set_rng_state_all,
        _is_in_bad_fork,
    )


def _add_memory_stats_api(mod: types.ModuleType, c: Any, index: Callable[[Any], int]) -> None:
    """The allocator's statistics and capacity (the rest of the memory API: _memory.py)."""

    def memory_allocated(device: Any = None) -> int:
        return int(c.memory_allocated(index(device)))

    def memory_reserved(device: Any = None) -> int:
        return int(c.memory_reserved(index(device)))

    def max_memory_allocated(device: Any = None) -> int:
        return int(c.max_memory_allocated(index(device)))

    def memory_stats(device: Any = None) -> dict[str, int]:
        return dict(c.memory_stats(index(device)))

    def reset_peak_memory_stats(device: Any = None) -> None:
        c.reset_peak_memory_stats(index(device))

    def empty_cache() -> None:
        c.empty_cache()

    def set_memory_capacity(nbytes: int, device: Any = None) -> None:
        c.set_memory_capacity(index(device), nbytes)

    def get_memory_capacity(device: Any = None) -> int:
        return int(c.get_memory_capacity(index(device)))

    def memory_protection_enabled() -> bool:
        return bool(c.memory_protection_enabled())

    def device_memory_is_host_addressable() -> bool:
        """The driver's answer: True when host code may read and write device memory in place
        (host views, the zero-copy fallback); False for a device whose memory the host reaches
        only through copies (a GPU, an NPU, OpenCL; ``SCAFFOLD_DEVICE_MEMORY=discrete``)."""
        return bool(c.device_memory_is_host_addressable())

    _export(
        mod,
        memory_allocated, memory_reserved, max_memory_allocated, memory_stats,
        reset_peak_memory_stats, empty_cache, set_memory_capacity,
        get_memory_capacity, memory_protection_enabled, device_memory_is_host_addressable,
    )


def _add_fallback_counts(mod: types.ModuleType, name: str) -> None:
    """How often ops ran through the CPU fallback (ops defined by the generated code)."""

    def _fallback_op(op_name: str) -> Any:
        try:
            return getattr(getattr(torch.ops, name), op_name)
        except (AttributeError, RuntimeError) as err:
            raise RuntimeError(
                f"torch.ops.{name}.{op_name} is not defined: this build of the "
                f"'{name}' backend has no generated fallback code"
            ) from err

    def fallback_counts() -> dict[str, int]:
        """How often each op ran through the CPU fallback, by op name."""
        names, counts = _fallback_op("_fallback_counts")()
        return dict(zip(names, counts, strict=True))

    def reset_fallback_counts() -> None:
        _fallback_op("_reset_fallback_counts")()

    def declined_kernel_counts() -> dict[str, int]:
        """Of fallback_counts(), the runs of ops whose kernel declined: kernels that compute on
        host views, on a device whose memory the host cannot address, and device kernels for
        calls their device code does not cover (a dtype)."""
        names, counts = _fallback_op("_declined_kernel_counts")()
        return dict(zip(names, counts, strict=True))

    def fallback_traffic() -> dict[str, dict[str, int]]:
        """Per op that ran through the CPU fallback: its ``calls``, the ``bytes_moved`` between
        host and device memory (both ways), and the ``tensor_bytes`` its device tensors hold
        (arguments and results): the fallback's traffic against what a copy of each needs."""
        names, calls, moved, tensors = _fallback_op("_fallback_traffic")()
        return {
            name: {"calls": c, "bytes_moved": m, "tensor_bytes": t}
            for name, c, m, t in zip(names, calls, moved, tensors, strict=True)
        }

    _export(mod, fallback_counts, reset_fallback_counts, declined_kernel_counts, fallback_traffic)


def _add_amp(mod: types.ModuleType, name: str) -> None:
    """Mixed precision: the dtypes autocast supports, and ``torch.<name>.amp``."""

    def get_amp_supported_dtype() -> list[torch.dtype]:
        return [torch.float16, torch.bfloat16]

    _export(mod, get_amp_supported_dtype)
    vars(mod)["amp"] = _make_amp_module(name, get_amp_supported_dtype)


def _add_inductor_codegen(mod: types.ModuleType, name: str) -> None:
    """Inductor asks the device module for its code generators; resolving them lazily keeps
    Inductor out of ``import torch_<name>``. From torch 2.15 on, Inductor first calls the module's
    ``_inductor_backend_init`` hook, at each compile until the device is registered: it registers
    everything (torch.utils.backend_registration's note). Earlier releases look the code generators
    up as attributes, which register on first use."""

    def __getattr__(attribute: str) -> Any:
        from . import _inductor

        if attribute in _inductor.CODEGEN_ATTRIBUTES:
            return _inductor.codegen_attribute(name, attribute)
        raise AttributeError(f"module 'torch.{name}' has no attribute '{attribute}'")

    def _inductor_backend_init() -> None:
        from . import _inductor

        _inductor.register(name)

    vars(mod)["__getattr__"] = __getattr__
    vars(mod)["_inductor_backend_init"] = _inductor_backend_init


def _make_amp_module(name: str, supported_dtypes: Any) -> types.ModuleType:
    """``torch.<name>.amp``: autocast for this device, as ``torch.cuda.amp`` for CUDA. The casts
    are PyTorch's autocast op lists, registered for the device in csrc/ops/autocast.cpp."""
    amp = types.ModuleType(f"torch.{name}.amp", f"Automatic mixed precision on the '{name}' device.")

    def autocast(
        dtype: torch.dtype = torch.bfloat16, enabled: bool = True, cache_enabled: bool = True
    ) -> torch.autocast:
        """``torch.autocast("<name>", dtype=...)``; dtype is one of get_amp_supported_dtype()."""
        return torch.autocast(name, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    for fn in (autocast,):
        fn.__module__ = amp.__name__
    vars(amp).update(autocast=autocast, get_amp_supported_dtype=supported_dtypes)
    return amp
