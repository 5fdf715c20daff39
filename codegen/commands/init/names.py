"""A new backend's name: what it becomes (device, package, autoload shim) and whether it may be
used. NAME must be a safe identifier (model/ident.py's rules, shared with the backend YAML) and nothing
the installed torch already has."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import types
import warnings
from collections.abc import Callable, Iterator

from ...errors import ProjectConfigError, SourceLocation
from ...model import ident

_AUTOLOAD = "TORCH_DEVICE_BACKEND_AUTOLOAD"


def check_device_name(name: str, *, force: bool = False) -> None:
    """NAME must be a safe identifier, and nothing torch already has: `torch.NAME` (the device
    module), `Tensor.NAME()` / `Tensor.is_NAME` and `Module.NAME()` (the generated methods). Nor
    may it be the device of another backend package (model/ident.py's DEVICE_PACKAGES, or an
    installed torch_NAME), unless `force`: the user means to."""
    location = SourceLocation("NAME")
    ident.check_name(ident.device_name_issue(name) or ident.torch_module_clash(name), location)
    if not force:
        ident.check_name(ident.device_package_issue(name), location)
    clash = _torch_attribute_clash(name)
    if clash is not None:
        raise ProjectConfigError(
            f"device name '{name}' is already used by PyTorch ({clash})",
            location=location,
            hint="pick a name PyTorch does not use, such as 'my_npu'",
        )


def _torch_attribute_clash(name: str) -> str | None:
    torch = _import_torch_without_backends()

    existing = getattr(torch, name, None)
    if existing is not None and not getattr(existing, "_scaffold_device_module", False):
        return f"torch.{name} exists"
    for owner, attribute in (
        (torch.Tensor, name),
        (torch.Tensor, f"is_{name}"),
        (torch.nn.Module, name),
        (torch.UntypedStorage, name),
    ):
        if hasattr(owner, attribute) and not _is_generated_device_method(name):
            return f"{owner.__module__}.{owner.__qualname__}.{attribute} exists"
    return None


def _import_torch_without_backends() -> types.ModuleType:
    """torch, imported without autoloading installed backends (which would add their own names
    to torch); the environment is left as it was. Whatever torch prints while importing (a
    missing NumPy, a CUDA driver notice) is kept from the user, whose terminal shows the tool's
    own messages only; if the import fails, its error is the message."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    previous = os.environ.get(_AUTOLOAD)
    os.environ[_AUTOLOAD] = "0"
    try:
        with warnings.catch_warnings(), _silenced_stderr() as chatter:
            warnings.simplefilter("ignore")
            try:
                import torch
            except Exception as error:  # noqa: BLE001 -- a broken torch fails in any way; say how
                raise ProjectConfigError(
                    f"torch cannot be imported: {type(error).__name__}: {error}",
                    hint=chatter().strip().splitlines()[-1] if chatter().strip() else None,
                ) from None
    finally:
        if previous is None:
            del os.environ[_AUTOLOAD]
        else:
            os.environ[_AUTOLOAD] = previous
    return torch


@contextlib.contextmanager
def _silenced_stderr() -> Iterator[Callable[[], str]]:
    """Redirect file descriptor 2 (C++ and Python writers alike) to a temporary file; yields a
    function returning what was written so far."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)

        def written() -> str:
            sink.flush()
            sink.seek(0)
            return sink.read().decode("utf-8", "replace")

        try:
            yield written
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _is_generated_device_method(name: str) -> bool:
    """True when `name` is the device name of a backend loaded in this process (whose generated
    Tensor methods are then expected, not a clash)."""
    return bool(_import_torch_without_backends()._C._get_privateuse1_backend_name() == name)
