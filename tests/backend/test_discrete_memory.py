"""A device that owns its memory: the simulated driver with SCAFFOLD_DEVICE_MEMORY=discrete says
device memory is not host-addressable (drvDevAttrHostAddressableMemory 0) and refuses host code
the host view of it, as a GPU's driver would. The runtime then reaches device memory through the
driver's copies and fills only: foo's kernels (ATen's CPU kernels on host views) decline and
their ops run through the CPU fallback, which copies what the op's tensors hold and no more.

Each check runs in a child process (the mode is read once per process); the last test runs a
part of foo's own backend tests that way."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from foo_testing import foo

REPO = Path(__file__).resolve().parents[2]


def run_discrete(code: str, *, memory: str = "discrete", **variables: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SCAFFOLD_DEVICE_MEMORY=memory, **variables)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=600, check=False
    )


def assert_runs(code: str) -> str:
    completed = run_discrete(code)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout


def test_the_default_memory_is_host_addressable() -> None:
    assert foo.device_memory_is_host_addressable() is True


def test_discrete_memory_is_not_host_addressable_and_host_views_are_refused() -> None:
    assert_runs(
        """
        import pytest, torch, torch_foo
        assert torch.foo.device_memory_is_host_addressable() is False
        x = torch.arange(6.0, device="foo")
        with pytest.raises(RuntimeError, match="host code cannot address foo memory"):
            torch.ops.scaffold_runtime.host_view(x)
        assert x.sum().item() == 15.0  # .item(): a copy
        """
    )


def test_a_malformed_mode_is_refused_naming_the_variable() -> None:
    completed = run_discrete("import torch, torch_foo; torch.ones(1, device='foo')", memory="shared")
    assert completed.returncode != 0
    assert "SCAFFOLD_DEVICE_MEMORY='shared' is not a memory mode" in completed.stderr


def test_core_ops_and_a_training_step_equal_the_cpu() -> None:
    """Copies with strides and casts, fills of every element size, views written through, and a
    small CNN's training steps: the same values as on the CPU, with no host access."""
    assert_runs(
        """
        import torch, torch_foo
        torch.manual_seed(0)
        x = torch.randn(6, 5)
        d = x.to("foo")
        assert torch.equal(d.t().contiguous().cpu(), x.t().contiguous())
        assert torch.equal(d[::2, 1:].to(torch.float64).cpu(), x[::2, 1:].to(torch.float64))
        d[:, 1].fill_(7.0)
        x[:, 1].fill_(7.0)
        d[1:3].zero_()
        x[1:3].zero_()
        assert torch.equal(d.cpu(), x)
        for dtype in (torch.uint8, torch.float16, torch.float32, torch.float64, torch.complex128):
            assert torch.equal(torch.full((33,), 3, dtype=dtype, device="foo").cpu(), torch.full((33,), 3, dtype=dtype))

        def model():
            torch.manual_seed(1)
            return torch.nn.Sequential(
                torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 10),
            )

        def train(device):
            net = model().to(device)
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
            generator = torch.Generator().manual_seed(2)
            for _ in range(3):
                inputs = torch.randn(4, 3, 8, 8, generator=generator).to(device)
                target = torch.randint(0, 10, (4,), generator=generator).to(device)
                loss = torch.nn.functional.cross_entropy(net(inputs), target)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return [p.detach().cpu() for p in net.parameters()], [b.cpu() for b in net.buffers()]

        (params, buffers), (ref_params, ref_buffers) = train("foo"), train("cpu")
        for a, b in zip(params + buffers, ref_params + ref_buffers):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        assert torch.foo.declined_kernel_counts(), "foo's kernels should have declined"
        """
    )


def test_the_fallback_moves_no_more_than_the_ops_tensors_hold() -> None:
    """Bytes moved between host and device by each fallback run, against the bytes of the op's
    device tensors (arguments and results): never more, for ops on dense tensors, whichever
    fallback copies; and on host-addressable memory with host views, nothing at all."""
    code = """
        import torch, torch_foo
        a, b = torch.randn(64, 32, device="foo"), torch.randn(32, 16, device="foo")
        torch.foo.reset_fallback_counts()
        (a @ b).softmax(-1)
        torch.erfinv(a.clamp(-0.5, 0.5))
        a.add_(1.0)
        traffic = torch.foo.fallback_traffic()
        assert traffic, "nothing ran through the fallback"
        for op, t in traffic.items():
            assert 0 <= t["bytes_moved"] <= t["tensor_bytes"], (op, t)
        print(sum(t["bytes_moved"] for t in traffic.values()))
        """
    assert int(assert_runs(code).split()[-1]) > 0
    # Host views: the zero-copy fallback (not ATen's copying one, SCAFFOLD_HOST_VIEW_FALLBACK=0).
    addressable = run_discrete(code, memory="host", SCAFFOLD_HOST_VIEW_FALLBACK="1")
    assert addressable.returncode == 0, addressable.stderr[-3000:]
    assert int(addressable.stdout.split()[-1]) == 0


# What the discrete pass of foo's backend tests runs: the ops, layers, models and the conformance
# subset compared with the CPU, the runtime's APIs, collectives -- on a device whose memory the host
# cannot address. (Tests of what foo's kernels do on host views skip there: needs_host_views.)
DISCRETE_PASS = (
    "tests/backend/test_autocast.py",
    "tests/backend/test_conformance.py",
    "tests/backend/test_distributed.py",
    "tests/backend/test_dtype_coverage.py",
    "tests/backend/test_foo_custom_classes.py",
    "tests/backend/test_foo_custom_ops.py",
    "tests/backend/test_host_view_fallback.py",
    "tests/backend/test_memory_api.py",
    "tests/backend/test_mixed_devices.py",
    "tests/backend/test_model_layers.py",
    "tests/backend/test_models.py",
    "tests/backend/test_ops.py",
    "tests/backend/test_printing.py",
    "tests/backend/test_profiler.py",
    "tests/backend/test_runtime.py",
    "tests/backend/test_tied_weights.py",
)


@pytest.mark.slow
@pytest.mark.skipif(not foo.device_memory_is_host_addressable(), reason="already the discrete run")
def test_backend_tests_pass_in_discrete_memory() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider", *DISCRETE_PASS],
        cwd=REPO,
        env=dict(os.environ, SCAFFOLD_DEVICE_MEMORY="discrete"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
