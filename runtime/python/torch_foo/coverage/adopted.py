"""What the tests `scaffold-backend adopt` writes (tests/adopted/test_<op>.py) run: an op on the
device against the CPU, on a call signature a coverage report recorded (report.py says how one is
written).

Inputs are made from the recorded shapes and dtypes, the same on both sides: floating and complex
tensors normal random numbers (seeded), booleans random, integers zeros (a valid index into any
non-empty dimension; edit the test where an op needs other data). While the op's kernel is still
the generated stub, the test is an expected failure, on the stub's own message only; once a kernel
exists, the results (and every argument the op writes) must match the CPU's, the outputs must be
on the device, and the call must not have gone through the CPU fallback.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch


class _NotRebuildable(Exception):
    """A recorded argument this module cannot make again (the report said `unsupported`)."""


def _device() -> str:
    return torch._C._get_privateuse1_backend_name()


def resolve_op(name: str) -> Any:
    """torch.ops' overload for a qualified name ("aten::add.out", "aten::relu")."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


def _make_tensor(shape: Sequence[int], dtype_name: str, generator: torch.Generator) -> torch.Tensor:
    dtype = getattr(torch, dtype_name)
    if dtype.is_floating_point or dtype.is_complex:
        base = torch.complex64 if dtype.is_complex else torch.float32
        return torch.randn(list(shape), dtype=base, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, list(shape), generator=generator).to(torch.bool)
    return torch.zeros(list(shape), dtype=dtype)


def _decode(value: Any, tensors: list[torch.Tensor], target: str, device: str) -> Any:
    """A recorded argument as a value for a call on `target` ("cpu" or the device)."""
    if isinstance(value, list):
        return [_decode(element, tensors, target, device) for element in value]
    if not isinstance(value, dict):
        return value
    if "tensor" in value:
        tensor = tensors[value["tensor"]]
        return tensor if value.get("device") == "cpu" else tensor.to(target)
    if "dtype" in value:
        return getattr(torch, value["dtype"])
    if "layout" in value:
        return getattr(torch, value["layout"])
    if "memory_format" in value:
        return getattr(torch, value["memory_format"])
    if "device" in value:
        recorded = torch.device(value["device"])
        return torch.device(target) if recorded.type == device else recorded
    if "generator" in value:
        return None
    if "float" in value:
        return float(value["float"])
    if "complex" in value:
        real, imaginary = value["complex"]
        return complex(real, imaginary)
    raise _NotRebuildable(f"the report could not record a {value.get('unsupported', value)!r} argument")


def _call_arguments(
    schema: Any, recorded: Sequence[Any], tensors: list[torch.Tensor], target: str, device: str
) -> tuple[list[Any], dict[str, Any]]:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for argument, value in zip(schema.arguments, recorded, strict=True):
        decoded = _decode(value, tensors, target, device)
        if argument.kwarg_only:
            kwargs[argument.name] = decoded
        else:
            args.append(decoded)
    return args, kwargs


def _written_arguments(schema: Any, args: list[Any], kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """The arguments the op writes (in-place and out=), by name."""
    positional = iter(args)
    written = []
    for argument in schema.arguments:
        value = kwargs[argument.name] if argument.kwarg_only else next(positional)
        if argument.alias_info is not None and argument.alias_info.is_write:
            written.append((argument.name, value))
    return written


def _tensors_of(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for element in value for tensor in _tensors_of(element)]
    return []


def _compare(actual: Any, expected: Any, what: str, *, values: bool) -> None:
    actual_tensors, expected_tensors = _tensors_of(actual), _tensors_of(expected)
    assert len(actual_tensors) == len(expected_tensors), (
        f"{what}: {len(actual_tensors)} tensors, the CPU gave {len(expected_tensors)}"
    )
    device = _device()
    for index, (got, want) in enumerate(zip(actual_tensors, expected_tensors, strict=True)):
        where = f"{what}[{index}]" if len(actual_tensors) > 1 else what
        assert got.device.type == device, f"{where} is on {got.device}, not on the {device} device"
        assert got.shape == want.shape and got.dtype == want.dtype, (
            f"{where}: {tuple(got.shape)} {got.dtype}, the CPU gave {tuple(want.shape)} {want.dtype}"
        )
        if values:
            torch.testing.assert_close(got.cpu(), want, equal_nan=True, msg=functools.partial(_located, where))
    if not actual_tensors and values:
        assert actual == expected, f"{what}: {actual!r}, the CPU gave {expected!r}"


def _located(where: str, message: str) -> str:
    return f"{where}: {message}"


def check_against_cpu(name: str, stub_errors: Sequence[str], signature: dict[str, Any]) -> None:
    """Run `name` on `signature`'s inputs on the device and on the CPU, and compare (see the module
    docstring). `stub_errors`: the messages of the generated stubs of the op's group."""
    import pytest

    device = _device()
    op = resolve_op(name)
    schema = op._schema
    generator = torch.Generator().manual_seed(0)
    tensors = [
        _make_tensor(shape, dtype, generator)
        for shape, dtype in zip(signature["shapes"], signature["dtypes"], strict=True)
    ]
    try:
        device_args, device_kwargs = _call_arguments(schema, signature["arguments"], tensors, device, device)
        cpu_args, cpu_kwargs = _call_arguments(schema, signature["arguments"], tensors, "cpu", device)
    except _NotRebuildable as reason:
        pytest.skip(str(reason))
    cpu_args, cpu_kwargs = _fresh(cpu_args), {key: _fresh(value) for key, value in cpu_kwargs.items()}
    try:
        expected = op(*cpu_args, **cpu_kwargs)
    except Exception as error:  # noqa: BLE001 - whatever the CPU raises, the inputs are at fault
        pytest.fail(
            f"the CPU itself rejects the inputs made for {name} ({type(error).__name__}: {error}); "
            "edit this test's inputs",
            pytrace=False,
        )
    fallback_counts = getattr(torch, device).fallback_counts
    before = fallback_counts().get(name, 0)
    try:
        actual = op(*device_args, **device_kwargs)
    except NotImplementedError as error:
        message = str(error)
        stub = next((stub for stub in stub_errors if stub in message), None)
        if stub is None:
            raise
        pytest.xfail(f"not implemented yet: {stub}")
    assert fallback_counts().get(name, 0) == before, (
        f"{name} ran through the CPU fallback, not a kernel of the {device} backend: is it listed "
        "in the backend YAML, and the package rebuilt?"
    )
    values = torch.Tag.nondeterministic_seeded not in op.tags
    _compare(actual, expected, f"{name}'s result", values=values)
    for (argument, got), (_, want) in zip(
        _written_arguments(schema, device_args, device_kwargs),
        _written_arguments(schema, cpu_args, cpu_kwargs),
        strict=True,
    ):
        _compare(got, want, f"{name}'s argument {argument}", values=values)


def _fresh(value: Any) -> Any:
    """The CPU run's own copy of its tensors (the device run's inputs were copied before)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list):
        return [_fresh(element) for element in value]
    return value
