"""``jaxbench progress --job JOB STEP/STEPS NAME | done``: one line per step of a job.

A job of several commands (``make bench``: asv run, the paired history,
publish, regressions) calls this at the start of each step and once at the
end. Each call prints one line (a log or a terminal alike)::

    make bench: step 2/4 paired history, 6 min 01 s elapsed, ~4 min 58 s left (as the last run)
    make bench: done in 11 min 10 s (asv run 6 min 01 s, paired history 5 min 02 s, ...)

Step 1 starts a run; ``done`` ends it and keeps its steps' times, and the next
run's time left is what its remaining steps took then (a skipped step, such
as the paired history with ``PAIRED=0``, counts nothing). The commands that
report within a step (asv's own percentage, ``jaxbench pair-history``'s
line) still do. The times live in ``--state`` (default
``.asv/progress.json``, beside asv's environments), keyed by job.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from jaxbench.errors import UsageError
from jaxbench.render.progress import done_line, step_line
from jaxbench.store.fsio import write_text_atomic

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print one progress line per step of a job of several commands (make bench)"

_STEP = re.compile(r"^(\d+)/(\d+)$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", required=True, help="the job's name, e.g. 'make bench'")
    parser.add_argument(
        "where",
        metavar="STEP/STEPS|done",
        help="the step starting now, e.g. 2/4 (1 starts a run), or done (the run ended)",
    )
    parser.add_argument("name", metavar="NAME", nargs="?", help="the step's name, e.g. 'asv run'")
    parser.add_argument(
        "--state",
        type=Path,
        default=Path(".asv/progress.json"),
        help="where the steps' times are kept (default: .asv/progress.json)",
    )


def _read(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        print(f"jaxbench progress: {path} is unreadable; starting afresh", file=sys.stderr)
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _parse(where: str, name: str | None) -> tuple[int, int, str]:
    match = _STEP.match(where)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise UsageError(f"progress: {where!r} is not a step; give STEP/STEPS such as 2/4, or done")
    if not name:
        raise UsageError(f"progress: step {where} has no name; give one, e.g. 'asv run'")
    return int(match.group(1)), int(match.group(2)), name


def _close_step(current: dict[str, Any], now: float) -> list[Any] | None:
    """The running step as [step, name, seconds], if there is one."""
    step = current.get("current")
    if not isinstance(step, list) or len(step) != 3:
        return None
    number, name, started = step
    return [int(number), str(name), max(0.0, now - float(started))]


def _run_of(job: dict[str, Any]) -> dict[str, Any]:
    """The job's running run, or {} (none, or not as this command writes it)."""
    current = job.get("run")
    if not isinstance(current, dict) or not isinstance(current.get("started"), (int, float)):
        return {}
    if not isinstance(current.get("done"), list):
        current["done"] = []
    return current


def _left(job: dict[str, Any], number: int) -> float | None:
    """What the steps from ``number`` on took in the job's last complete run."""
    last = job.get("last")
    if not isinstance(last, dict) or not last:
        return None
    try:
        return sum(float(s) for k, s in last.items() if int(k) >= number)
    except (TypeError, ValueError):
        return None


def run(args: argparse.Namespace) -> int:
    now = time.time()
    state = _read(args.state)
    found = state.get(args.job)
    job: dict[str, Any] = found if isinstance(found, dict) else {}
    current = _run_of(job)
    if args.where == "done":
        if not current:
            print(f"{args.job}: done (no step was reported)")
            return 0
        finished = _close_step(current, now)
        steps = [*current["done"], *([finished] if finished else [])]
        print(done_line(args.job, now - float(current["started"]), [(n, s) for _, n, s in steps]))
        job = {"last": {str(number): seconds for number, _, seconds in steps}}
    else:
        number, total, name = _parse(args.where, args.name)
        if number == 1 or not current:
            current = {"started": now, "done": []}
        else:
            finished = _close_step(current, now)
            if finished:
                current["done"] = [*current["done"], finished]
        current["current"] = [number, name, now]
        left = _left(job, number)
        print(step_line(args.job, number, total, name, now - float(current["started"]), left))
        job = {**job, "run": current}
    state[args.job] = job
    sys.stdout.flush()
    args.state.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.state, json.dumps(state, indent=1) + "\n")
    return 0
