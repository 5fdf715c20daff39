"""Conformance with PyTorch's own OpInfo tests: every OpInfo sample of `op_db`, made on this
backend's device, against its CPU twin, forward and backward (the method of PyTorch's
`TestCommon.test_compare_cpu`, with PyTorch's own skips and tolerances).

    python -m <package>.conformance            # the CI subset (expectations.toml, [ci])
    python -m <package>.conformance --all      # the full sweep
    python -m <package>.conformance --ops add mul --json report.json

Every op runs in a worker subprocess (`worker.py`); a crash (SIGSEGV, abort) or a hang is recorded
against the (op, dtype) test that was running and the sweep goes on in a fresh worker. What the
backend is expected to fail, and why, lives in one reviewed file: `expectations.toml`.

This package is device-name agnostic: `scaffold-backend init` copies it into every project.
"""
