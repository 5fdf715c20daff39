"""Run the command line in a process that stops itself (SIGSTOP) at a named step of the write
transaction, so that a fault test can kill -9 it exactly there rather than at a random moment.

    python tests/fault_injection.py POINT [scaffold-backend arguments...]

The points, in order (see write/transaction.py for the steps):

- `staged`: every file is staged beside its target and the journal says "staging" (the tree is
  the old one; the next run undoes the attempt). Stopped before the decided journal is written.
- `journal`: the journal is decided; nothing is renamed yet. Stopped before `_finish`, which a
  run that completes an interrupted transaction (`recover`) reaches too.
- `operation:K`: K of the journal's operations (renames and deletions, in journal order) are
  done, counting those a completing run does again.
- `committed`: every operation is done, the manifest's rename (the last) included; the journal is
  not yet removed.

The steps are wrapped here, in the process under test; the generator itself has no such switch.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from scaffold_backend.commands.cli import main
from scaffold_backend.write import transaction


def _stop() -> None:
    os.kill(os.getpid(), signal.SIGSTOP)


def _stop_before(step: Callable[..., Any], when: Callable[..., bool] = lambda *_, **__: True) -> Callable[..., Any]:
    @functools.wraps(step)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if when(*args, **kwargs):
            _stop()
        return step(*args, **kwargs)

    return wrapped


def _stop_after_call(step: Callable[..., Any], count: int) -> Callable[..., Any]:
    calls = 0

    @functools.wraps(step)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = step(*args, **kwargs)
        calls += 1
        if calls == count:
            _stop()
        return result

    return wrapped


def inject(point: str) -> None:
    """Make this process stop at `point` (one of the points of the module docstring)."""
    if point == "staged":
        transaction._write_journal = _stop_before(
            transaction._write_journal, lambda *_, staging: not staging
        )
    elif point == "journal":
        transaction._finish = _stop_before(transaction._finish)
    elif point.startswith("operation:"):
        count = int(point.partition(":")[2])
        transaction._apply = _stop_after_call(transaction._apply, count)
    elif point == "committed":
        transaction._remove_journal = _stop_before(transaction._remove_journal)
    else:
        raise SystemExit(f"fault_injection.py: unknown point {point!r}")


if __name__ == "__main__":
    inject(sys.argv[1])
    sys.argv = ["scaffold-backend", *sys.argv[2:]]
    main()
