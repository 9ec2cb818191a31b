"""Detection power of ``jaxbench compare`` on this machine, with real runs.

Two ways of measuring base and head are compared (``--method``):

* ``lockstep`` (default; what the pull-request workflow does): ``jaxbench
  ab``'s runner (:func:`jaxbench.lockstep.coordinator.run_lockstep`) times base and head
  side by side in pinned process pairs, ``--ab-rounds`` rounds of
  ``--per-round`` samples a side; the verdict is ``jaxbench compare
  --paired`` (:func:`jaxbench.analyse.stats.compare_paired`). For contrast the table
  also shows the unpaired per-round test on the very same samples.
* ``asv``: one ``asv run`` per side, as described below. Its verdict is the
  within-run test (``compare_samples``: Welch on log per-round medians), which
  ``jaxbench compare`` applies only when both sides come from one run; two
  separately run commits are tested against the series' spread between runs
  instead (``analyse/runs.py``; measured by ``bench/bench_cross_run.py``).

For each condition (no change, and a head made about 5 %, 10 % and 20 %
slower by real extra work) it makes ``--pairs`` base/head comparisons. Each
side of a comparison is one ``asv run --python=same --record-samples`` (this
venv, the suite's own ``rounds``/``repeat``/``number``) of
``workloads.Predict.time_warm`` (rows 64) from a throw-away benchmark
directory, under two real commit hashes of this repository (``HEAD~1`` =
base, ``HEAD`` = head) given with ``--set-commit-hash``. The head's benchmark
module does extra host-side work inside every timed call (a pure-Python loop
of ``k`` iterations before the jitted call; ``shared/ASV-NOTES.md``: extra
work *inside* the jitted function jumps in steps), so nothing recorded is
ever scaled. ``k`` is sized with a bare alternating loop in this process
(batches of 50 back-to-back base calls, then head calls, in turn; one probe
at about twice the largest level, assumed linear), and the true slowdown that
loop measures is printed beside each nominal level.

Runs are interleaved: pairs go round the conditions, and the side that runs
first alternates from pair to pair (base, head / head, base), so drifting
load on the shared machine falls on every condition and on both sides alike.
``--interleave-rounds`` goes further, as asv's option of that name does: one
``asv run -a rounds=1 --append-samples`` per side per round, in turn.

Each pair's result files are read with ``jaxbench.store.results`` and compared with
``jaxbench.analyse.compare.compare_points`` (the library, not the CLI). The table
shows, per condition, how many comparisons were flagged as a regression
(and, for no change, as any change) by

* jaxbench before: Mann-Whitney on the pooled samples (``round_size=None``);
* jaxbench now: the per-round test (``round_size`` = the suite's ``repeat``,
  read from ``benchmarks.json``), both with the default factor and alpha;
* asv: ``asv compare``'s own rule (``asv.commands.compare._is_result_better``:
  factor 1.1 and ``asv._stats.is_different``, Mann-Whitney at p < 0.002 on
  the pooled samples).

In the first ``--work-pairs`` pairs of no change and +5 %, the runs also
include ``PredictFigures.track_work_*`` (XLA's cost and memory analysis, HLO
counts), and the table counts the pairs where ``jaxbench compare`` called any
of them changed. The host-side slowdown is invisible to XLA by construction;
an in-graph extra matmul is shown, once, to change them.

``--save FILE`` keeps every pair's samples (JSON, written as it goes);
``--reanalyse FILE`` prints the table and the spread of a saved run again.

    .venv/bin/python bench/bench_power.py --pairs 20 --work-pairs 5 --save power.json

The machine is a shared 2-core box: absolute times mean nothing; the counts
and ratios are the result. See ``docs/detection-power.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from asv_existing import write_conf  # noqa: E402  (bench/ is on sys.path as the script's folder)

from jaxbench.analyse.compare import Settings, compare_points  # noqa: E402
from jaxbench.analyse.stats import Verdict, compare_samples, round_medians  # noqa: E402
from jaxbench.kinds import Kind  # noqa: E402
from jaxbench.store.fsio import write_text_atomic  # noqa: E402
from jaxbench.store.results import Point, load_result_file  # noqa: E402

MACHINE = "jaxbench-power"
TIME = "workloads.Predict.time_warm"
LEVELS = (0.0, 0.05, 0.10, 0.20)
BATCH = 50  # calls per bare sample

SUITE = '''"""Made by bench/bench_power.py: Predict, {extra} extra loop iterations a call."""
from jaxbench.measure.asvsuite import jax_suite

EXTRA = {extra}

_Timed, PredictFigures = jax_suite("Predict", "predict", params={{"rows": [64]}})


def _spin(k):
    total = 0
    for i in range(k):
        total += i
    return total


class Predict(_Timed):
    def time_warm(self, *p):
        _spin(EXTRA)
        super().time_warm(*p)


del _Timed
'''


# --- calibration: a bare alternating loop in this process ----------------------


def _spin(k: int) -> int:
    total = 0
    for i in range(k):
        total += i
    return total


def _predict_call() -> Callable[[int], None]:
    import jax

    from jaxbench.measure import timing, workloads

    placed = timing.place(workloads.get("predict", rows=64))
    fn: Callable[..., Any] = jax.jit(workloads.get("predict", rows=64).fn)
    args = placed.args
    block: Callable[[Any], Any] = jax.block_until_ready
    for _ in range(200):
        block(fn(*args))

    def call(extra: int) -> None:
        _spin(extra)
        block(fn(*args))

    return call


def _batch(call: Callable[[int], None], extra: int) -> float:
    start = time.perf_counter()
    for _ in range(BATCH):
        call(extra)
    return (time.perf_counter() - start) / BATCH


def bare_slowdown(call: Callable[[int], None], extra: int, rounds: int = 400) -> float:
    """Median over alternating batches of head time / base time, minus 1."""
    ratios = []
    for _ in range(rounds):
        base = _batch(call, 0)
        head = _batch(call, extra)
        ratios.append(head / base)
    return statistics.median(ratios) - 1.0


def calibrate(levels: Sequence[float]) -> dict[float, tuple[int, float]]:
    """Loop iterations and bare-loop slowdown for each level (0 -> (0, 0.0)).

    The slowdown per loop iteration is measured once, at about twice the
    largest level (where it stands well above the noise), and assumed linear.
    """
    call = _predict_call()
    base = statistics.median(_batch(call, 0) for _ in range(400))
    start = time.perf_counter()
    _spin(200_000)
    per_iteration = (time.perf_counter() - start) / 200_000
    probe = max(1, round(2 * max(levels) * base / per_iteration))
    slope = max(bare_slowdown(call, probe, rounds=800), 1e-6) / probe
    out: dict[float, tuple[int, float]] = {}
    for level in levels:
        extra = round(level / slope) if level else 0
        out[level] = (extra, bare_slowdown(call, extra, rounds=800) if extra else 0.0)
    return out


def calibrate_pinned(levels: Sequence[float]) -> dict[float, tuple[int, float]]:
    """As :func:`calibrate`, with this process pinned to one CPU, as lockstep rounds are."""
    from jaxbench.lockstep.coordinator import round_cpus

    cpus = round_cpus(1, 0)
    if not cpus:
        return calibrate(levels)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cpus))
    try:
        return calibrate(levels)
    finally:
        os.sched_setaffinity(0, before)


def lockstep_pair(
    sides: tuple[Side, Side], level: float, rounds: int, per_round: int
) -> dict[str, Any]:
    """One comparison by ``jaxbench ab``'s runner and ``compare --paired``'s test."""
    from jaxbench.analyse.stats import compare_paired
    from jaxbench.lockstep import coordinator as lockstep

    base, head = (
        lockstep.Side(label, sys.executable, side.bench_dir)
        for label, side in zip(("base", "head"), sides, strict=True)
    )
    b, h = lockstep.run_lockstep(base, head, TIME, 0, rounds=rounds, per_round=per_round, cpus=1)
    if not (b.samples and h.samples):
        raise PairFailed(f"no samples: base {b.failure or b.skip}, head {h.failure or h.skip}")
    paired = compare_paired(b.samples, h.samples, round_size=per_round)
    assert paired is not None
    return {
        "level": level,
        "ratio": paired.ratio,
        "base": b.samples,
        "head": h.samples,
        "round_size": per_round,
        "jaxbench": paired.verdict.value,
        "method": "lockstep",
    }


def _conditions(data: dict[str, Any]) -> list[tuple[str, int, float, list[dict[str, Any]]]]:
    """(name, loop iterations, true slowdown, saved pairs) per condition that ran."""
    out = []
    for level_text, (extra, true) in data["calibration"].items():
        level = float(level_text)
        mine = [o for o in data["pairs"] if o["level"] == level]
        if mine:
            out.append(("no change" if level == 0 else f"+{level:.0%}", extra, true, mine))
    return out


def format_lockstep_table(data: dict[str, Any]) -> str:
    """Counts per condition: the paired test, and the unpaired per-round test."""
    from jaxbench.analyse.stats import compare_paired

    lines = [
        "| condition | loop iterations | true slowdown (bare loop, pinned) | paired ratio, "
        "median [min-max] | flagged by compare --paired | any change flagged (paired) "
        "| unpaired per-round test, same samples |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, extra, true, mine in _conditions(data):
        n = len(mine)
        verdicts = []
        for o in mine:
            c = compare_paired(o["base"], o["head"], round_size=o["round_size"])
            assert c is not None
            verdicts.append(c)
        regress = sum(c.verdict is Verdict.REGRESSION for c in verdicts)
        changed = sum(c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in verdicts)
        unpaired = sum(
            compare_samples(o["base"], o["head"], round_size=o["round_size"]).verdict
            is Verdict.REGRESSION
            for o in mine
        )
        ratios = [c.ratio or float("nan") for c in verdicts]
        lines.append(
            f"| {name} | {extra} | {true:+.1%} | {statistics.median(ratios):.3f} "
            f"[{min(ratios):.3f}-{max(ratios):.3f}] | {regress}/{n} | {changed}/{n} "
            f"| {unpaired}/{n} |"
        )
    return "\n".join(lines)


def format_lockstep_noise(data: dict[str, Any]) -> str:
    """Spread of the per-round paired estimates of the no-change pairs."""
    import math

    from jaxbench.analyse.stats import paired_round_estimates

    spreads = []
    for o in data["pairs"]:
        if o["level"] != 0.0:
            continue
        est = paired_round_estimates(o["base"], o["head"], o["round_size"])
        if est and len(est) > 1:
            spreads.append(statistics.stdev(est))
    if not spreads:
        return "no no-change pairs"
    rms = math.sqrt(statistics.fmean(v * v for v in spreads))
    lines = [
        f"no change: sd of the per-round paired log-ratio estimates (rms over pairs): "
        f"{rms:.4f}, i.e. about {rms:.1%} per round"
    ]
    for level_text in data["calibration"]:
        lines.append(bootstrap_rate(data, float(level_text)))
    return "\n".join(line for line in lines if line)


def bootstrap_rate(data: dict[str, Any], level: float, draws: int = 10_000) -> str:
    """Share of comparisons flagged, from rounds redrawn out of every pair of a level.

    20 comparisons can only show a rate to within about 15 %; the rounds of
    all pairs of a condition, drawn again at random ``rounds`` at a time
    (with replacement), estimate the rate of the very same test (paired
    Wilcoxon at alpha and the paired gate) far more finely, on the
    assumption that rounds are independent, which lockstep rounds (fresh
    processes, rotating CPUs) are meant to be.
    """
    import math
    import random

    from jaxbench.analyse.stats import (
        DEFAULT_ALPHA,
        PAIRED_FACTOR,
        paired_p_value,
        paired_round_estimates,
    )

    pool: list[float] = []
    rounds = 0
    for o in data["pairs"]:
        if o["level"] != level:
            continue
        est = paired_round_estimates(o["base"], o["head"], o["round_size"])
        if est:
            pool.extend(est)
            rounds = len(est)
    if not pool or rounds < 2:
        return ""
    rng = random.Random(12345)
    gate = math.log(PAIRED_FACTOR)
    flagged = 0
    for _ in range(draws):
        draw = [rng.choice(pool) for _ in range(rounds)]
        shift = statistics.median(draw)
        if shift <= gate:  # the gate first: the test only matters beyond it
            continue
        if paired_p_value(draw) < DEFAULT_ALPHA:
            flagged += 1
    name = "no change" if level == 0 else f"+{level:.0%}"
    return (
        f"{name}: {len(pool)} rounds redrawn {rounds} at a time, {draws} times: "
        f"{flagged / draws:.4%} flagged as a regression"
    )


def in_graph_work_change() -> dict[str, tuple[float | None, float | None]]:
    """Work figures of predict and of predict with one extra matmul in the graph."""
    import jax

    from jaxbench.measure import timing, workloads, xla_analysis

    workload = workloads.get("predict", rows=64)
    placed = timing.place(workload)

    def extra(x: Any, w: Any) -> Any:
        y = workload.fn(x, w)
        return y + 1e-30 * (x @ w)

    figures = []
    for fn in (workload.fn, extra):
        compiled = jax.jit(fn).lower(*placed.args).compile()
        figures.append(xla_analysis.work_figures(compiled))
    names = ("flops", "bytes_accessed", "hlo_ops")
    return {n: (getattr(figures[0], n), getattr(figures[1], n)) for n in names}


# --- asv runs ---------------------------------------------------------------------


def _git(*args: str) -> str:
    return subprocess.check_output(["git", "-C", str(ROOT), *args], text=True).strip()


@dataclass(frozen=True)
class Side:
    commit: str
    bench_dir: Path
    conf: Path


def _side(tmp: Path, name: str, commit: str, extra: int) -> Side:
    bench_dir = tmp / name / "benchmarks"
    bench_dir.mkdir(parents=True)
    (bench_dir / "__init__.py").write_text("")
    (bench_dir / "workloads.py").write_text(SUITE.format(extra=extra))
    conf = tmp / name / "asv.conf.json"
    write_conf(conf, benchmark_dir=bench_dir, results_dir=tmp / "results", html_dir=tmp / "html")
    return Side(commit, bench_dir, conf)


def asv_run(side: Side, pattern: str, rounds: int | None, append: bool = False) -> None:
    command = [
        sys.executable,
        "-m",
        "asv",
        "run",
        "--config",
        str(side.conf),
        "--python=same",
        "--set-commit-hash",
        side.commit,
        "--machine",
        MACHINE,
        "-b",
        pattern,
        "--record-samples",
    ]
    if rounds is not None:
        command += ["-a", f"rounds={rounds}"]
    if append:
        command.append("--append-samples")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise PairFailed(f"asv run exited {done.returncode}: {done.stderr.strip()[-300:]}")


class PairFailed(Exception):
    """One comparison could not be made (asv failed); the pair is retried, then skipped."""


def _points(results: Path, commit: str) -> list[Point]:
    files = [p for p in (results / MACHINE).glob(f"{commit[:8]}-*.json")]
    if len(files) != 1:
        raise SystemExit(f"expected one result file for {commit[:8]} in {results}, got {files}")
    return load_result_file(files[0], results / "benchmarks.json")


def _asv_flags(base: Point, head: Point) -> bool:
    """``asv compare``'s regression rule: factor 1.1 and is_different (p < 0.002)."""
    from asv.commands.compare import _is_result_better

    def stats(p: Point) -> dict[str, Any]:
        ci = p.ci_99 or (None, None)
        return {"ci_99_a": ci[0], "ci_99_b": ci[1], "repeat": p.repeat, "number": p.number}

    return bool(
        _is_result_better(
            base.value,
            head.value,
            (stats(base), list(base.samples)),
            (stats(head), list(head.samples)),
            1.1,
        )
    )


@dataclass(frozen=True)
class Outcome:
    level: float
    ratio: float
    jaxbench: Verdict
    asv_regression: bool
    work_changed: int | None  # rows of kind WORK not UNCHANGED, None if not run
    base_samples: tuple[float, ...]
    head_samples: tuple[float, ...]
    round_size: int  # the suite's repeat, from benchmarks.json


def one_pair(
    tmp: Path,
    sides: tuple[Side, Side],
    level: float,
    with_work: bool,
    head_first: bool,
    rounds: int | None,
    interleave: bool = False,
) -> Outcome:
    results = tmp / "results"
    shutil.rmtree(results, ignore_errors=True)
    pattern = r"Predict\.time_warm" + (r"|PredictFigures\.track_work" if with_work else "")
    order = sides[::-1] if head_first else sides
    if interleave:  # as asv's --interleave-rounds: one round a side, in turn
        from jaxbench.measure.asvsuite import ROUNDS

        for i in range(rounds or ROUNDS):
            for side in order:
                asv_run(side, pattern if i == 0 else r"Predict\.time_warm", 1, append=True)
    else:
        for side in order:
            asv_run(side, pattern, rounds)
    base, head = (_points(results, side.commit) for side in sides)
    bench_info = json.loads((results / "benchmarks.json").read_text())[TIME]
    round_size = int(bench_info["repeat"])
    report = compare_points(base, head, Settings(round_size=round_size))
    time_row = next(r for r in report.rows if r.benchmark == TIME)
    work = [r for r in report.rows if r.kind is Kind.WORK]
    b = next(p for p in base if p.key.benchmark == TIME)
    h = next(p for p in head if p.key.benchmark == TIME)
    if not (b.samples and h.samples):
        raise PairFailed(f"no samples recorded ({time_row.comparison.reason})")
    return Outcome(
        level=level,
        ratio=time_row.comparison.ratio or float("nan"),
        jaxbench=time_row.verdict,
        asv_regression=_asv_flags(b, h),
        work_changed=sum(r.verdict is not Verdict.UNCHANGED for r in work) if with_work else None,
        base_samples=b.samples,
        head_samples=h.samples,
        round_size=round_size,
    )


# --- report -----------------------------------------------------------------------


def _verdicts(saved: dict[str, Any]) -> tuple[Verdict, Verdict]:
    """(pooled Mann-Whitney, per-round test) verdicts of one saved pair, default settings."""
    base, head = saved["base"], saved["head"]
    return (
        compare_samples(base, head).verdict,
        compare_samples(base, head, round_size=saved["round_size"]).verdict,
    )


def by_suite(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Saved pairs grouped by the suite's shape (samples a side, samples a round).

    A suite edited while the script runs changes what a run records; pairs
    whose sides differ in shape compared two different suites and are left out.
    """
    groups: dict[str, dict[str, Any]] = {}
    for o in data["pairs"]:
        if len(o["base"]) != len(o["head"]):
            continue
        label = f"{len(o['base'])} samples a side, {o['round_size']} a round"
        groups.setdefault(label, {**data, "pairs": []})["pairs"].append(o)
    return groups


def format_table(data: dict[str, Any]) -> str:
    """The results table from saved pairs: both tests, asv's rule, work rows."""
    lines = [
        "| condition | loop iterations | true slowdown (bare loop) | asv-measured ratio, "
        "median [min-max] | pooled Mann-Whitney (before) | per-round test (now) "
        "| asv compare rule | work rows changed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, extra, true, mine in _conditions(data):
        level = mine[0]["level"]
        n = len(mine)
        ratios = [o["ratio"] for o in mine]
        cells = []
        for which in (0, 1):
            verdicts = [_verdicts(o)[which] for o in mine]
            regress = sum(v is Verdict.REGRESSION for v in verdicts)
            if level:
                cells.append(f"{regress}/{n}")
            else:
                changed = sum(v in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for v in verdicts)
                cells.append(f"{regress}/{n} (any change {changed}/{n})")
        theirs = sum(o["asv"] for o in mine)
        work = [o["work_changed"] for o in mine if o["work_changed"] is not None]
        work_text = f"{sum(w > 0 for w in work)}/{len(work)} pairs" if work else "not run"
        lines.append(
            f"| {name} | {extra} | {true:+.1%} | {statistics.median(ratios):.3f} "
            f"[{min(ratios):.2f}-{max(ratios):.2f}] | {cells[0]} | {cells[1]} | "
            f"{theirs}/{n} | {work_text} |"
        )
    return "\n".join(lines)


def format_noise(data: dict[str, Any]) -> str:
    """Spread of per-round medians, and the rounds a 5 % question would need."""
    import math

    from scipy.stats import norm

    within: list[float] = []
    run_means: list[float] = []
    for o in data["pairs"]:
        for side in ("base", "head"):
            medians = round_medians(o[side], o["round_size"])
            if medians is None or len(medians) < 2:
                continue
            logs = [math.log(m) for m in medians]
            within.append(statistics.stdev(logs))
            if side == "base":
                run_means.append(statistics.fmean(logs))
    if not within:
        return "no whole rounds recorded"
    sigma = math.sqrt(statistics.fmean(v * v for v in within))
    between_runs = statistics.stdev(run_means) if len(run_means) > 1 else float("nan")
    z = norm.ppf(1 - 0.01 / 2) + norm.ppf(0.95)
    need = math.ceil(2 * (z * sigma / math.log(1.05)) ** 2)
    return (
        f"spread of log per-round medians within a run (rms of sd): {sigma:.3f}; "
        f"sd of a run's mean log median across base runs: {between_runs:.3f}\n"
        f"rounds per side a two-sided test at alpha 0.01 needs for 95 % power at +5 % "
        f"with that within-run spread (normal approximation): {need}"
    )


def report(data: dict[str, Any]) -> None:
    """Print the table and the spread, one block per suite shape met."""
    if data.get("method") == "lockstep":
        print(format_lockstep_table(data))
        print(format_lockstep_noise(data))
        return
    groups = by_suite(data)
    left_out = len(data["pairs"]) - sum(len(g["pairs"]) for g in groups.values())
    if left_out:
        print(f"{left_out} comparison(s) across two suite versions left out")
    for label, group in groups.items():
        if len(groups) > 1:
            print(f"\n{label}:")
        print(format_table(group))
        print(format_noise(group))


def _saved(o: Outcome) -> dict[str, Any]:
    return {
        "level": o.level,
        "ratio": o.ratio,
        "base": o.base_samples,
        "head": o.head_samples,
        "jaxbench": o.jaxbench.value,
        "asv": o.asv_regression,
        "work_changed": o.work_changed,
        "round_size": o.round_size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="comparisons per condition")
    parser.add_argument(
        "--method",
        choices=("lockstep", "asv"),
        default="lockstep",
        help="lockstep: jaxbench ab + compare --paired (default); asv: one asv run a side",
    )
    parser.add_argument(
        "--ab-rounds",
        type=int,
        default=12,
        help="lockstep rounds, one look (default: 12, all the rounds ab's two looks take)",
    )
    parser.add_argument(
        "--per-round", type=int, default=100, help="lockstep samples a round (default: 100)"
    )
    parser.add_argument(
        "--work-pairs",
        type=int,
        default=None,
        help="pairs (no change and +5%%) that also run the track_work_* figures (default: all)",
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="asv rounds per side (default: the suite's)"
    )
    parser.add_argument(
        "--interleave-rounds",
        action="store_true",
        help="run each side one round at a time, alternating (asv --interleave-rounds)",
    )
    parser.add_argument(
        "--levels",
        type=lambda text: tuple(float(v) for v in text.split(",")),
        default=LEVELS,
        help="slowdown levels to run, comma-separated (default: 0,0.05,0.1,0.2)",
    )
    parser.add_argument(
        "--save", type=Path, default=None, help="write every pair's samples here, as it goes"
    )
    parser.add_argument(
        "--reanalyse", type=Path, default=None, help="print the table of a --save file and stop"
    )
    args = parser.parse_args()
    if args.reanalyse:
        saved = json.loads(args.reanalyse.read_text())
        print(f"{len(saved['pairs'])} comparisons from {args.reanalyse}")
        report(saved)
        return 0
    work_pairs = args.pairs if args.work_pairs is None else args.work_pairs

    base_commit, head_commit = _git("rev-parse", "HEAD~1"), _git("rev-parse", "HEAD")
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes", "--machine", MACHINE],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    lock = args.method == "lockstep"
    print("calibrating with a bare alternating loop ...", flush=True)
    calibration = calibrate_pinned(args.levels) if lock else calibrate(args.levels)
    for level, (extra, true) in calibration.items():
        print(f"  nominal +{level:.0%}: {extra} loop iterations -> bare loop {true:+.1%}")
    graph = in_graph_work_change()
    print("in-graph extra matmul, work figures base -> head:", flush=True)
    for name, (before, after) in graph.items():
        print(f"  {name}: {before} -> {after}")

    data: dict[str, Any] = {
        "calibration": {str(k): v for k, v in calibration.items()},
        "in_graph": graph,
        "pairs": [],
        "interleave_rounds": args.interleave_rounds,
        "method": args.method,
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jaxbench-power-") as tmp_name:
        tmp = Path(tmp_name)
        base_side = _side(tmp, "base", base_commit, 0)
        heads = {
            level: _side(tmp, f"head{i}", head_commit, extra)
            for i, (level, (extra, _)) in enumerate(calibration.items())
        }
        for pair in range(args.pairs):
            for level in args.levels:
                outcome = None
                if lock:
                    try:
                        saved = lockstep_pair(
                            (base_side, heads[level]), level, args.ab_rounds, args.per_round
                        )
                    except PairFailed as exc:
                        print(f"pair {pair + 1} +{level:.0%} failed: {exc}")
                        data["skipped"] = data.get("skipped", 0) + 1
                        continue
                    data["pairs"].append(saved)
                    if args.save:
                        write_text_atomic(args.save, json.dumps(data))
                    print(
                        f"pair {pair + 1:2d} +{level:.0%}: paired ratio {saved['ratio']:.3f} "
                        f"jaxbench {saved['jaxbench']}  [{time.perf_counter() - started:.0f} s]",
                        flush=True,
                    )
                    continue
                for attempt in (1, 2):
                    try:
                        outcome = one_pair(
                            tmp,
                            (base_side, heads[level]),
                            level,
                            with_work=level in (0.0, 0.05) and pair < work_pairs,
                            head_first=pair % 2 == 1,
                            rounds=args.rounds,
                            interleave=args.interleave_rounds,
                        )
                        break
                    except PairFailed as exc:
                        print(f"pair {pair + 1} +{level:.0%} attempt {attempt} failed: {exc}")
                if outcome is None:
                    data["skipped"] = data.get("skipped", 0) + 1
                    continue
                data["pairs"].append(_saved(outcome))
                if args.save:
                    write_text_atomic(args.save, json.dumps(data))
                print(
                    f"pair {pair + 1:2d} +{level:.0%}: ratio {outcome.ratio:.3f} "
                    f"jaxbench {outcome.jaxbench.value}, asv "
                    f"{'regression' if outcome.asv_regression else '-'}, work changed "
                    f"{outcome.work_changed}  [{time.perf_counter() - started:.0f} s]",
                    flush=True,
                )
    print()
    print(
        f"{args.pairs} pairs per condition ({args.method}), machine {os.uname().nodename}, "
        f"{(time.perf_counter() - started) / 60:.1f} min"
    )
    report(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
