"""First-call figures of base and head, measured in fresh processes side by side.

A first call (trace, lower, compile, first execute) happens once per process,
so ``asv run`` records one value of it per commit: no test can tell a change
from the machine's mood. Here each *round* runs the suite's figures process
(``first_call_worker.py``, asv's ``setup_cache`` of the ``track_*``
benchmarks) once for each side, one right after the other, the side that
goes first alternating from round to round (:func:`jaxbench.lockstep.coordinator.schedule`),
so pair ``i`` of base and head share the machine's state of that moment.
``jaxbench compare`` tests the pairs with a paired t-test
(:func:`jaxbench.analyse.stats.compare_paired`, one value a round).

Processes run one at a time, never together: a first call compiles with
every core XLA finds, and two at once would measure the contention.

Never imports jax: the workers do, in their own environments.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jaxbench.errors import UsageError
from jaxbench.lockstep.coordinator import Side, WorkerError, schedule

__all__ = ["FIRST_CALL_WORKER", "FirstCalls", "measure_first_calls"]

#: The worker script, run as a file so that the benchmarked environment needs
#: only asv_runner, not this version of jaxbench.
FIRST_CALL_WORKER = Path(__file__).with_name("first_call_worker.py")

# Variables that would make the figures process write into the results
# (the HLO store) as if it were an asv run.
_RUN_MARKERS = ("ASV_COMMIT", "JAXBENCH_COMMIT")


@dataclass
class FirstCalls:
    """One side's figures: per benchmark, per parameter set, one value a round.

    A value is None when that round failed, NaN when it skipped.
    """

    versions: dict[str, str] = field(default_factory=dict)
    params: dict[str, list[list[str]]] = field(default_factory=dict)
    values: dict[str, list[list[float | None]]] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)


def _run_worker(side: Side, methods: list[str], timeout: float) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k not in _RUN_MARKERS}
    env.update(side.environ)  # e.g. the side's commit in front, the matrix's XLA_FLAGS
    try:
        proc = subprocess.run(
            [side.python, str(FIRST_CALL_WORKER), str(side.benchmarks), *methods],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise UsageError(
            f"cannot start the {side.label} Python {side.python!r}: {exc.strerror or exc}; "
            "give the interpreter of an environment with the commit installed"
        ) from None
    except subprocess.TimeoutExpired:
        raise WorkerError(
            f"{side.label}: the figures process took over {timeout:g} s; raise --timeout"
        ) from None
    lines = proc.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except ValueError:
        answer = {}
    if "benchmarks" not in answer:
        tail = (answer.get("error") or proc.stderr or "").strip().splitlines()[-1:]
        raise WorkerError(
            f"{side.label}: the figures process failed (exit {proc.returncode}): "
            f"{tail[0] if tail else 'no answer'}; check that the suite runs there (asv check)"
        )
    return [b for b in answer["benchmarks"] if isinstance(b, dict)]


def _record(into: FirstCalls, found: list[dict[str, Any]]) -> None:
    for bench in found:
        name = str(bench["name"])
        into.versions[name] = str(bench.get("version"))
        into.params[name] = bench.get("params") or []
        per_param = into.values.setdefault(name, [[] for _ in bench["values"]])
        for slot, raw in zip(per_param, bench["values"], strict=False):
            slot.append(float("nan") if raw == "skip" else raw)
        into.errors.setdefault(name, []).extend(str(e) for e in bench.get("errors", []))


def measure_first_calls(
    base: Side,
    head: Side,
    methods: list[str],
    *,
    rounds: int,
    timeout: float = 600.0,
    progress: Callable[[int, int], None] | None = None,
    keep_going: Callable[[int, FirstCalls, FirstCalls], bool] | None = None,
) -> tuple[FirstCalls, FirstCalls]:
    """Up to ``rounds`` fresh figures processes a side, in turn; base's and head's figures.

    ``keep_going(done, base, head)``, asked after each round but the last,
    ends the rounds early when it returns False (a sequential rule, a time
    budget). ``progress(round, rounds)`` is called after each round; after
    the last one ``round == rounds`` (the rounds actually run)."""
    if rounds < 1:
        raise UsageError(f"rounds must be 1 or more, got {rounds}")
    for side in (base, head):
        if not side.benchmarks.is_dir():
            raise UsageError(
                f"{side.benchmarks}: no such benchmark directory; give the suite's folder "
                "(asv.conf.json's benchmark_dir)"
            )
    sides = (base, head)
    out = (FirstCalls(), FirstCalls())
    for round_index in range(rounds):
        for which in schedule(1, round_index)[0]:
            _record(out[which], _run_worker(sides[which], methods, timeout))
        done = round_index + 1
        last = done == rounds or (keep_going is not None and not keep_going(done, *out))
        if progress is not None:
            progress(done, done if last else rounds)
        if last:
            break
    return out
