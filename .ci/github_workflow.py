"""Run one job of a GitHub Actions workflow here, as a runner would: its `run:` steps in order, in a
working copy, with the environment and `${{ }}` expressions the workflow declares.

CI uses it on the workflows `scaffold-backend init` writes into projects, which are otherwise only
parsed: their steps run for real, in a fresh virtual environment (put first on PATH by the caller),
with values a runner would give (a matrix leg of the workflow's own matrix, workflow_dispatch
inputs, repository variables). Only what those workflows use is understood; anything else (an
unknown action, an expression that is not a context value or `a || 'b'`, a step condition) stops
the run with a message instead of being skipped.

    python .ci/github_workflow.py WORKFLOW.yml --job JOB --workdir DIR
        [--leg KEY=VALUE] [--input NAME=VALUE ...] [--var NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

# Actions a step may use, and why running nothing for them is what the runner would have done:
# the working directory is the checkout, and the Python on PATH is the one the job asked for
# (checked against the step's python-version).
_CHECKOUT = "actions/checkout"
_SETUP_PYTHON = "actions/setup-python"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_CONTEXT_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)+")
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
# GitHub's default shell on Linux, and the one `shell: bash` (or defaults.run.shell) asks for.
_DEFAULT_SHELL = ["bash", "-e"]
_BASH_SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


class WorkflowError(Exception):
    """The workflow uses something this runner does not do (or was given wrong values)."""


def evaluate(expression: str, context: Mapping[str, Mapping[str, str]]) -> str:
    """The value of one expression: a context value (`matrix.torch`), a string literal, or
    alternatives joined by `||` (the first that is not empty, as GitHub's `||` on strings)."""
    value = ""
    for operand in (part.strip() for part in expression.split("||")):
        literal = _LITERAL.fullmatch(operand)
        if literal:
            value = literal.group(1).replace("''", "'")
        elif _CONTEXT_VALUE.fullmatch(operand):
            name, _, key = operand.partition(".")
            if name not in context:
                raise WorkflowError(f"unknown context '{name}' in ${{{{ {expression} }}}}")
            value = context[name].get(key, "")
        else:
            raise WorkflowError(f"unsupported expression ${{{{ {expression} }}}}")
        if value:
            return value
    return value


def substitute(text: str, context: Mapping[str, Mapping[str, str]]) -> str:
    return _EXPRESSION.sub(lambda match: evaluate(match.group(1), context), text)


def expressions(document: Any) -> list[str]:
    """Every `${{ }}` expression in a workflow, in order (for checking that all are understood)."""
    if isinstance(document, dict):
        return [found for key, value in document.items() for found in expressions(key) + expressions(value)]
    if isinstance(document, list):
        return [found for item in document for found in expressions(item)]
    if isinstance(document, str):
        return _EXPRESSION.findall(document)
    return []


def load(path: Path) -> dict[Any, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise WorkflowError(f"{path}: not a workflow")
    return document


def _matrix_leg(job: Mapping[str, Any], selector: str | None) -> dict[str, str]:
    legs = job.get("strategy", {}).get("matrix", {}).get("include", [])
    if selector is None:
        if legs:
            raise WorkflowError("the job has a matrix: choose a leg with --leg KEY=VALUE")
        return {}
    key, _, value = selector.partition("=")
    chosen = [leg for leg in legs if str(leg.get(key)) == value]
    if len(chosen) != 1:
        raise WorkflowError(f"--leg {selector}: the job's matrix has {len(chosen)} such legs, among {legs}")
    return {name: str(item) for name, item in chosen[0].items()}


def _inputs(workflow: Mapping[Any, Any], given: Mapping[str, str]) -> dict[str, str]:
    # PyYAML reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True)) or {}
    declared = (triggers.get("workflow_dispatch") or {}).get("inputs", {}) if isinstance(triggers, dict) else {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise WorkflowError(f"unknown input(s) {unknown}; the workflow declares {sorted(declared)}")
    values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    values.update(given)
    missing = [name for name, spec in declared.items() if spec.get("required") and not values[name]]
    if missing:
        raise WorkflowError(f"required input(s) {missing} not given (--input NAME=VALUE)")
    return values


def _check_python(step: Mapping[str, Any], context: Mapping[str, Mapping[str, str]]) -> None:
    wanted = substitute(str(step.get("with", {}).get("python-version", "")), context)
    found = subprocess.run(
        ["python", "-c", "import sys; print(f'{sys.version_info.major}.{sys.version_info.minor}')"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    if wanted and found != wanted:
        raise WorkflowError(f"the job wants Python {wanted}; the python on PATH is {found}")


def run_job(
    workflow_path: Path,
    job_name: str,
    workdir: Path,
    leg: str | None = None,
    inputs: Mapping[str, str] | None = None,
    variables: Mapping[str, str] | None = None,
) -> int:
    workflow = load(workflow_path)
    job = workflow.get("jobs", {}).get(job_name)
    if job is None:
        raise WorkflowError(f"{workflow_path}: no job '{job_name}' (jobs: {sorted(workflow.get('jobs', {}))})")
    shell_name = (workflow.get("defaults") or {}).get("run", {}).get("shell")
    shell = {None: _DEFAULT_SHELL, "bash": _BASH_SHELL}.get(shell_name)
    if shell is None:
        raise WorkflowError(f"unsupported default shell '{shell_name}'")
    runner_temp = Path(tempfile.mkdtemp(prefix="runner-temp-"))
    context: dict[str, dict[str, str]] = {
        "matrix": _matrix_leg(job, leg),
        "inputs": _inputs(workflow, inputs or {}),
        "vars": dict(variables or {}),
        # What a step may read of the run; the token authenticates nothing here.
        "github": {"token": "local-run-without-github", "workspace": str(workdir)},
        "runner": {"temp": str(runner_temp), "os": "Linux"},
    }
    environment = dict(os.environ, CI="true", GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(workdir),
                       RUNNER_TEMP=str(runner_temp), GITHUB_STEP_SUMMARY=str(runner_temp / "step-summary.md"))
    for scope in (workflow, job):
        environment.update({str(k): substitute(str(v), context) for k, v in (scope.get("env") or {}).items()})
    for number, step in enumerate(job.get("steps", []), 1):
        title = step.get("name") or step.get("uses") or f"step {number}"
        if "if" in step:
            raise WorkflowError(f"step '{title}': conditions (if:) are not supported")
        if "uses" in step:
            action = str(step["uses"]).split("@", 1)[0]
            if action == _SETUP_PYTHON:
                _check_python(step, context)
            elif action != _CHECKOUT:
                raise WorkflowError(f"step '{title}': action {step['uses']} is not supported")
            print(f"== {title}: {step['uses']} (the caller's working copy and Python)", flush=True)
            continue
        script = runner_temp / f"step-{number}.sh"
        script.write_text(substitute(str(step["run"]), context), encoding="utf-8")
        step_environment = dict(environment)
        step_environment.update({str(k): substitute(str(v), context) for k, v in (step.get("env") or {}).items()})
        directory = workdir / substitute(str(step.get("working-directory", ".")), context)
        print(f"== {title}", flush=True)
        started = time.monotonic()
        result = subprocess.run([*shell, str(script)], cwd=directory, env=step_environment, check=False)
        print(f"== {title}: exit {result.returncode} after {time.monotonic() - started:.0f} s", flush=True)
        if result.returncode != 0:
            return result.returncode
    return 0


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, equals, item = value.partition("=")
        if not equals:
            raise WorkflowError(f"{option} {value}: expected NAME=VALUE")
        pairs[name] = item
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workflow", type=Path)
    parser.add_argument("--job", required=True)
    parser.add_argument("--workdir", type=Path, required=True, help="the checkout the steps run in")
    parser.add_argument("--leg", help="the matrix leg to run, chosen by one of its values (KEY=VALUE)")
    parser.add_argument("--input", action="append", default=[], help="a workflow_dispatch input (NAME=VALUE)")
    parser.add_argument("--var", action="append", default=[], help="a repository variable (NAME=VALUE)")
    options = parser.parse_args(argv)
    try:
        return run_job(options.workflow, options.job, options.workdir.resolve(), options.leg,
                       _pairs(options.input, "--input"), _pairs(options.var, "--var"))
    except WorkflowError as error:
        print(f"error: {options.workflow}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
