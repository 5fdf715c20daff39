"""python -m <package>.coverage: see the package docstring and `--help`."""

from __future__ import annotations

import argparse
import importlib
import os
import runpy
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import torch

from . import recorder
from .report import build_report, render_markdown, to_json

_PACKAGE = __package__ or "coverage"
_BACKEND_PACKAGE = _PACKAGE.rsplit(".", 1)[0]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m {_PACKAGE}",
        description="Run a script as `python SCRIPT ARGS...` would, recording every aten op that "
        "reaches the device: its path (native kernel, CPU fallback, ...), calls, seconds and "
        "inputs, ranked by the time spent on the CPU fallback.",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report here")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write the markdown table here")
    parser.add_argument(
        "--top",
        type=int,
        default=20,
        metavar="N",
        help="rows of the table printed (to stderr) and written with --markdown (default 20; 0: all); "
        "the JSON report keeps every op",
    )
    parser.add_argument(
        "--max-signatures",
        type=int,
        default=recorder.DEFAULT_MAX_SIGNATURES,
        metavar="N",
        help="distinct input signatures kept per op, the first seen (default %(default)s)",
    )
    parser.add_argument(
        "-m", dest="as_module", action="store_true", help="SCRIPT is a module: run it as python -m does"
    )
    parser.add_argument("script", metavar="SCRIPT", help="the program (or, with -m, the module) to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="its arguments")
    return parser


def _run_path(path: str, args: Sequence[str]) -> None:
    """As `python PATH ARGS...`: its directory first on sys.path, a fresh __main__ module."""
    with open(path, "rb") as stream:
        code = compile(stream.read(), path, "exec")
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    main = types.ModuleType("__main__")
    main.__dict__.update({"__file__": path, "__builtins__": __builtins__, "__cached__": None})
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _run_module(module: str, args: Sequence[str]) -> None:
    """As `python -m MODULE ARGS...`: the working directory first on sys.path."""
    sys.argv = [module, *args]
    sys.path[0] = os.getcwd()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _finish(options: argparse.Namespace, command: list[str]) -> None:
    """Stop recording and write the report (never raises: the script's outcome stands)."""
    try:
        recorder.stop()
        report = build_report(recorder.table(), torch._C._get_privateuse1_backend_name(), command)
        top = options.top or None
        if options.json is not None:
            options.json.write_text(to_json(report), encoding="utf-8")
        if options.markdown is not None:
            options.markdown.write_text(render_markdown(report, top), encoding="utf-8")
        sys.stderr.write("\n" + render_markdown(report, top))
        if options.json is not None:
            sys.stderr.write(f"\nThe full report: {options.json}\n")
    except Exception as error:  # noqa: BLE001 - the report is lost, the script's exit status is kept
        sys.stderr.write(f"{_PACKAGE}: could not write the report: {error}\n")


def main(argv: Sequence[str] | None = None) -> None:
    options = _parser().parse_args(argv)
    if options.max_signatures < 0 or options.top < 0:
        _parser().error("--top and --max-signatures must be >= 0")
    if not options.as_module and not os.path.isfile(options.script):
        _parser().error(f"{options.script}: no such file")
    importlib.import_module(_BACKEND_PACKAGE)  # the device, before the script's first op
    command = [options.script, *options.args]
    recorder.clear()
    recorder.start(options.max_signatures)
    try:
        if options.as_module:
            _run_module(options.script, options.args)
        else:
            _run_path(options.script, options.args)
    finally:
        # Whatever the script's end (return, sys.exit, an exception), the report is written and
        # the end propagates: its exit status and traceback are the script's own.
        _finish(options, command)


if __name__ == "__main__":
    main()
