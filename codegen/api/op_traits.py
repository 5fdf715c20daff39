"""Per-operator settings of native_functions.yaml that the declarations header does not carry but
the generated wrappers need (whether an op's arguments may be on several devices, whether it runs
under a device guard), read from the installed torchgen's own copy of the file."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torchgen

# Ops that take tensors on two devices by design: copy_ calls them to move data between the host
# and the backend. ATen leaves their device_check on (in-tree backends never ask for device
# checks), so a backend with `device_guard: true` would reject every host<->device copy.
CROSS_DEVICE_OPS = frozenset(
    {"_copy_from", "_copy_from.out", "_copy_from_and_resize", "_copy_from_and_resize.out"}
)


@dataclass(frozen=True)
class OpTraits:
    """Per-operator settings from native_functions.yaml that decide the generated wrapper."""

    device_check: bool = True
    """False for ops that legitimately mix devices (copies, CPU scalars in TensorIterator ops)."""
    device_guard: bool = True


def native_functions_yaml() -> Path:
    """The native_functions.yaml that ships inside the installed torchgen."""
    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


@functools.cache
def installed_op_traits() -> Mapping[str, OpTraits]:
    """Traits of every op in the installed torchgen's native_functions.yaml. Ops missing there
    (a header from another release) get the defaults.

    The file is machine-written with one entry per `- func:` line and the two keys we need at
    two-space indent, so a line scan reads it in ~10 ms where a YAML load takes ~200 ms; the
    test suite checks the scan against a full YAML parse of the same file."""
    traits: dict[str, OpTraits] = {}
    op_name: str | None = None
    device_check = device_guard = True

    def finish() -> None:
        if op_name is not None:
            traits[op_name] = OpTraits(device_check=device_check, device_guard=device_guard)

    with native_functions_yaml().open(encoding="utf-8") as stream:
        for line in stream:
            if line.startswith("- func:"):
                finish()
                op_name = line[len("- func:") :].strip().split("(", 1)[0]
                device_check = device_guard = True
            elif line.startswith("  device_check:"):
                device_check = line.split(":", 1)[1].split("#", 1)[0].strip() != "NoCheck"
            elif line.startswith("  device_guard:"):
                device_guard = line.split(":", 1)[1].split("#", 1)[0].strip() != "False"
    finish()
    for op_name in CROSS_DEVICE_OPS & traits.keys():
        traits[op_name] = OpTraits(device_check=False, device_guard=traits[op_name].device_guard)
    return traits
