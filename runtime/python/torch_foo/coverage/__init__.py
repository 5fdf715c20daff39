"""Which kernel next: a coverage report of the ops a real workload sends to this backend's device.

    python -m <package>.coverage [--json F] [--markdown F] [--top N] SCRIPT [ARGS...]
    python -m <package>.coverage [--json F] [--markdown F] [--top N] -m MODULE [ARGS...]

runs the script in this process as `python SCRIPT ARGS...` would (its `sys.argv`, `__main__`, output
and exit status are its own) while the runtime records every aten op that reaches the device:
its path, calls, seconds and the distinct inputs it saw. The ops are ranked by the time they
spend on the CPU fallback, the kernels worth writing first; `scaffold-backend adopt REPORT.json`
then adds the top ones to the backend YAML, with their kernel stubs and tests on exactly the
recorded inputs.

Paths (what the runtime saw, csrc/coverage/coverage.h):
- `fallback`: no kernel of the backend; the CPU fallback ran it (the calls `fallback_counts()`
  counts). `seconds` is the wall time of those calls, `overhead_seconds` the part of it spent on
  host views or copies rather than in the CPU kernel.
- `native`: a kernel of the backend. `seconds` is device time where the driver times events
  (`device_seconds`), else host time.
- `composite`: PyTorch's default kernel, built from other ops (CompositeImplicitAutograd ops
  decompose before reaching the device; CompositeExplicitAutograd ones run on it by calling other
  ops). The ops it calls have rows of their own; its time includes theirs.
- `custom`: an op of another namespace than aten (the backend's custom ops) with a device kernel.
- `other`: an op that reached the device and ran by none of these (e.g. the fallback refused it).

Times are inclusive: an op's seconds include the ops it calls. Recording is in the runtime's C++;
while it is off (any process not started by this command) the fallback pays one relaxed load per
call and every other op nothing.

This package is device-name agnostic: `scaffold-backend init` copies it into every project.
"""

from .recorder import recording
from .report import REPORT_VERSION, build_report, render_markdown

__all__ = ["REPORT_VERSION", "build_report", "recording", "render_markdown"]
