"""Runs the stages of one model in this process and writes its result as JSON (the driver starts
one worker per model)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from .catalogue import BY_NAME
from .checks import STAGES, run_model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}.worker")
    parser.add_argument("--model", required=True, choices=sorted(BY_NAME))
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    device = torch._C._get_privateuse1_backend_name()
    result = run_model(BY_NAME[args.model], device, tuple(args.stages))
    args.json.write_text(json.dumps(result.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
