"""Whole pull-request reviews with ``jaxbench review``: false alarms, planted regressions,
the power at +2 %, +3 % and +5 % real extra work, and the wall time of each review.

A scratch git repository gets a base commit; each review adds a head commit
on top of it and runs ``jaxbench review BASE HEAD`` at its own settings
(``ReviewSettings``: its time budget, rounds and samples; ``--budget`` passes
through), exactly as the pull-request workflow does. The exit status is the
check; the rows come from the review's ``.asv/review/review.json``, its steps'
times from ``.asv/review/steps.json``.

Suites (``--suite``):

* ``project``: a copy of this project (``src/``, ``benchmarks/``,
  ``pyproject.toml``; ``asv.conf.json`` cut to one environment: jax 0.10.2,
  optax, equinox, 4 logical CPU devices). Heads:

  - ``aa``: the README changes, the library code is identical (an A/A review);
  - ``warm2``, ``warm3``, ``warm5``: predict does real extra work, sized to
    make its warm time 2, 3 and 5 % slower: a reduction of tanh over a
    vector built from its input, kept by XLA (``y + 0.0 * extra``). That
    reduction is a kernel of its own, and launching it costs more than these
    levels (+12 % measured on a quiet 2-core machine), so the scratch base's
    predict already runs it over ``BASE_N`` elements and a planted head runs
    it over ``BASE_N + N``: the two sides differ only in the work done, not in
    their kernels. ``N`` is calibrated first, as ``bench_power.py``
    calibrates its plant: predict's compiled call timed in this process
    pinned to one CPU (as the review's lockstep rounds are), alternating
    batches of base and head calls, the cost of one element measured at a
    probe size, each ``N`` corrected once from what it measured (XLA's code
    is not exactly linear in the length); the slowdown each ``N`` really
    measured in that loop is printed beside it, and a level whose plant
    measured outside half to twice its size is left out, with a line that
    says so. The levels are reviewed on their own (not with the other
    planted heads, whose base is this project's predict as it is). The +2 %
    level is twice the review's gate on the paired ratio (1.01,
    ``jaxbench.analyse.stats.REVIEW_PAIRED_FACTOR``; ``compare``'s default
    is 1.02, which a +2 % estimate passes about half the time);
  - ``warm``: three more tanh passes over predict's output (+7 to +9 %);
  - ``compile``: a larger unrolled graph (16 chained tanh steps);
  - ``correctness``: predict's answer 1 % off (past its tolerance);
  - ``memory``, ``memory25``: 32 MiB and 4 MiB of host memory kept alive
    from each trace (what the workload adds to a fresh process grows).

* ``mcmc``: ``tinymcmc`` (``tests/corpus/mcmc.py``: HMC, a doubling sampler
  and dual-averaging warm-up on two models, ``lax.scan`` over the draws),
  adopted with ``jaxbench init --jax 0.10.2``, its suite
  ``benchmarks/samplers.py`` (first calls of 3 to 9 s, warm calls of 1 to
  13 ms). Heads: ``aa``, and ``leapfrog``: the HMC trajectory takes 10
  leapfrog steps, not 8 (more to compile, more work a draw).

A planted head counts as caught when the check fails *and* a row of its own
kind is flagged; the warm-time levels count as found when a warm-time row
is flagged. Prints one line per review (exit, wall time and its steps,
flagged rows by kind), then the tables: A/A reviews failing the check and
per-row rates, found of N per level, and the wall times. The issue's goal:
at least 95 % of +2 % found, at most 1 % of A/A failing, every review within
8 minutes. The full measurement (hours on a quiet 2-core machine)::

    .venv/bin/python bench/bench_review.py --suite project --aa 20 \\
        --planted warm2,warm3,warm5 --repeat-planted 20 --workdir /tmp/review-power

A short run (the script's own check)::

    .venv/bin/python bench/bench_review.py --suite project --aa 2 \\
        --planted warm2,warm3,warm5 --repeat-planted 2
    .venv/bin/python bench/bench_review.py --suite mcmc --aa 2 --planted leapfrog
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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scratch_repo import JAX, MACHINE, PROJECT, XLA_FLAGS, write_project

JAXBENCH = [sys.executable, "-m", "jaxbench"]
GIT_ID = ["-c", "user.name=b", "-c", "user.email=b@b"]

PREDICT = "def predict(x: Any, w: Any) -> Any:\n    return jnp.tanh(x @ w)\n"
#: predict with ``N`` more tanh, summed, kept by XLA (``{n}``: ``BASE_N`` in the base of
#: the warm-time levels, ``BASE_N`` + the level's calibrated ``N`` in their heads).
EXTRA_WORK = (
    "def predict(x: Any, w: Any) -> Any:\n"
    "    y = jnp.tanh(x @ w)\n"
    "    # the warm-time levels: {n} tanh kept by XLA\n"
    "    extra = jnp.sum(jnp.tanh(jnp.arange({n}, dtype=x.dtype) * x[0, 0]))\n"
    "    return y + 0.0 * extra\n"
)
PLANTS = {
    "warm": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    y = jnp.tanh(x @ w)\n"
        "    z = y\n"
        "    for _ in range(3):  # planted: real extra work, three tanh passes kept by XLA\n"
        "        z = jnp.tanh(z * 0.5)\n"
        "    return y + 0.0 * z\n"
    ),
    "compile": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    y = jnp.tanh(x @ w)\n"
        "    z = y\n"
        "    for i in range(16):  # planted: a larger unrolled graph\n"
        "        z = jnp.tanh(z + 0.01 * i)\n"
        "    return y + 0.0 * z\n"
    ),
    "correctness": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    return jnp.tanh(x @ w) * 1.01  # planted: 1 % off, past the tolerance\n"
    ),
    "memory": (
        "_KEPT: list[Any] = []  # planted: a host cache that keeps what each trace adds\n"
        "\n"
        "\n"
        "def predict(x: Any, w: Any) -> Any:\n"
        "    _KEPT.append(np.ones((8 * 1024 * 1024,), np.float32))  # planted: 32 MiB a trace\n"
        "    return jnp.tanh(x @ w)\n"
    ),
    "memory25": (
        "_KEPT: list[Any] = []  # planted: a host cache that keeps what each trace adds\n"
        "\n"
        "\n"
        "def predict(x: Any, w: Any) -> Any:\n"
        "    _KEPT.append(np.ones((1024 * 1024,), np.float32))  # planted: 4 MiB a trace\n"
        "    return jnp.tanh(x @ w)\n"
    ),
}
#: The warm-time levels planted as calibrated extra work.
LEVELS = {"warm2": 0.02, "warm3": 0.03, "warm5": 0.05}
#: The extra reduction's elements in the base of the warm-time levels (its kernel on both
#: sides): large enough that the reduction's own length sets its cost (about 0.5 ns an
#: element on a 2-core x86 machine), and with room below 32768, past which XLA's CPU
#: backend splits the reduction into parallel parts (pinned to one CPU, 16000 + 3000
#: elements measured 47 % slower than 16000 + 1500).
BASE_N = 16_000
LEAPFROG = "LEAPFROG = 8\n"
MCMC_PLANTS = {"leapfrog": "LEAPFROG = 10  # planted: a longer trajectory\n"}

#: The kind of row each planted head must make fail.
EXPECTED = {
    "warm": "time",
    "compile": "compile",
    "correctness": "accuracy",
    "memory": "memory",
    "memory25": "memory",
    "warm2": "time",
    "warm3": "time",
    "warm5": "time",
    "leapfrog": "compile",
}


def sh(
    args: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
) -> subprocess.CompletedProcess[str]:
    """Run a command; exits with its output on an unexpected status."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def git(root: Path, *args: str) -> str:
    return sh(["git", *GIT_ID, *args], root).stdout.strip()


def environ() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PYTHONUNBUFFERED": "1"})
    for name in ("JAXBENCH_RESULTS_DIR", "JAXBENCH_MACHINE", "GITHUB_ACTIONS"):
        env.pop(name, None)
    return env


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def _replace(path: Path, old: str, new: str, named: str) -> None:
    """In a scratch file, the code ``old`` becomes ``new`` (``named``: the constant
    that holds what this script expects to find there)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} changed: update {named} in bench_review.py"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _replace_predict(root: Path, old: str, new: str) -> None:
    """The scratch copy's predict, ``old``, becomes ``new``."""
    _replace(root / "src" / "jaxbench" / "measure" / "workloads.py", old, new, "PREDICT")


def make_project(root: Path, predict: str = PREDICT) -> str:
    """The scratch copy of this project, its predict ``predict``; returns the base commit."""
    write_project(root, "# scratch copy for bench_review.py\n")
    if predict != PREDICT:
        _replace_predict(root, PREDICT, predict)
    git(root, "init", "-q", "-b", "main")
    return _commit(root, "base")


def make_mcmc(root: Path) -> str:
    """``tinymcmc`` adopted with ``jaxbench init``, its samplers' suite; the base commit."""
    sys.path.insert(0, str(PROJECT / "tests" / "corpus"))
    import mcmc

    package = root / "src" / "tinymcmc"
    package.mkdir(parents=True)
    shutil.copy2(PROJECT / "tests" / "corpus" / "mcmc.py", package / "__init__.py")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '\n[project]\nname = "tinymcmc"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["numpy>=1.26", "jax>=0.4.30"]\n',
        encoding="utf-8",
    )
    (root / "README.md").write_text("# tinymcmc (bench_review.py)\n", encoding="utf-8")
    (root / ".gitignore").write_text("/.asv/\n/html/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    _commit(root, "tinymcmc")
    sh([*JAXBENCH, "init", "--jax", JAX], root, env=environ())
    for starter in (root / "benchmarks").glob("*.py"):
        if starter.name != "__init__.py":
            starter.unlink()
    (root / "benchmarks" / "samplers.py").write_text(mcmc.SUITE, encoding="utf-8")
    return _commit(root, "benchmarks: jaxbench, the samplers' suite")


# --- calibration: predict's extra work, timed pinned in this process -------------


def _predict_with(n: int) -> Callable[[], Any]:
    import jax
    import jax.numpy as jnp

    from jaxbench.measure import timing, workloads

    workload = workloads.get("predict", rows=64)
    placed = timing.place(workload)

    def extra(x: Any, w: Any) -> Any:
        y = jnp.tanh(x @ w)
        if not n:
            return y
        return y + 0.0 * jnp.sum(jnp.tanh(jnp.arange(n, dtype=x.dtype) * x[0, 0]))

    fn = jax.jit(extra)
    args = placed.args
    for _ in range(200):
        jax.block_until_ready(fn(*args))
    return lambda: jax.block_until_ready(fn(*args))


def _batch(call: Callable[[], Any], size: int = 50) -> float:
    start = time.perf_counter()
    for _ in range(size):
        call()
    return (time.perf_counter() - start) / size


def slowdown(base: Callable[[], Any], head: Callable[[], Any], rounds: int = 400) -> float:
    """Median over alternating batches of head time / base time, minus 1."""
    return statistics.median(_batch(head) / _batch(base) for _ in range(rounds)) - 1.0


def calibrate(levels: dict[str, float]) -> dict[str, tuple[int, float]]:
    """``N`` per level, and the slowdown each measured, pinned to one CPU.

    predict runs with the review environment's ``XLA_FLAGS``. The cost of one
    element is measured at a probe size near the levels and
    assumed linear for a first ``N``; XLA's code for the reduction is not
    exactly linear in its length, so each level's ``N`` is corrected once in
    proportion to what the first measured.
    """
    sys.path.insert(0, str(PROJECT / "src"))
    from jaxbench.lockstep.coordinator import round_cpus

    if "jax" in sys.modules:
        raise SystemExit("calibrate: jax was imported before XLA_FLAGS could be set")
    # as in the review's environment: with 4 logical devices predict's call costs more,
    # so a plant is a smaller share of it (30000 elements: 49 us a call, 29 us without)
    os.environ["XLA_FLAGS"] = XLA_FLAGS
    cpus = round_cpus(1, 0)
    before = os.sched_getaffinity(0) if cpus else None
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    try:
        base = _predict_with(BASE_N)
        probe = BASE_N // 8
        slope = max(slowdown(base, _predict_with(BASE_N + probe)), 1e-6) / probe
        out = {}
        for name, level in levels.items():
            n = max(1, round(level / slope))
            measured = slowdown(base, _predict_with(BASE_N + n))
            if measured > 0:
                n = max(1, round(n * level / measured))
                measured = slowdown(base, _predict_with(BASE_N + n))
            out[name] = (n, measured)
        return out
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)


# --- one review ------------------------------------------------------------------


@dataclass
class Review:
    kind: str
    status: int
    wall: float
    steps: dict[str, float]
    flagged: Counter[str] = field(default_factory=Counter)
    tested: Counter[str] = field(default_factory=Counter)
    summary: str = ""
    said: str = ""
    #: predict's warm-time rows: (params, paired ratio, verdict)
    predict: tuple[tuple[str, float, str], ...] = ()


def make_head(
    root: Path,
    base: str,
    suite: str,
    kind: str,
    index: int,
    plants: dict[str, str],
    base_predict: str = PREDICT,
) -> str:
    git(root, "checkout", "-q", "--detach", base)
    if kind == "aa":
        with (root / "README.md").open("a", encoding="utf-8") as readme:
            readme.write(f"\nA/A review {index}: no library change.\n")
    elif suite == "mcmc":
        _replace(root / "src" / "tinymcmc" / "__init__.py", LEAPFROG, MCMC_PLANTS[kind], "LEAPFROG")
    else:
        _replace_predict(root, base_predict, plants[kind])
    return _commit(root, f"{kind} {index}")


def review(root: Path, base: str, head: str, kind: str, args: argparse.Namespace) -> Review:
    command = [*JAXBENCH, "review", base, head, "--machine", MACHINE, "--budget", args.budget]
    for pattern in args.bench or ():
        command += ["-b", pattern]
    clock = time.perf_counter()
    done = subprocess.run(
        command, cwd=root, env=environ(), capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - clock
    if done.returncode not in (0, 1):
        raise SystemExit(f"jaxbench review exited {done.returncode}: {done.stderr[-3000:]}")
    work = root / ".asv" / "review"
    doc: dict[str, Any] = json.loads((work / "review.json").read_text(encoding="utf-8"))
    steps = json.loads((work / "steps.json").read_text(encoding="utf-8"))
    out = Review(kind, done.returncode, wall, steps, summary=doc["summary"], said=done.stderr)
    out.predict = tuple(
        (",".join(row["params"]), float(row["ratio"]), str(row["verdict"]))
        for row in doc["rows"]
        if row["benchmark"] == "workloads.Predict.time_warm" and row["ratio"] is not None
    )
    for row in doc["rows"]:
        if row["p_value"] is not None:
            out.tested[row["kind"]] += 1
        if row["category"] is not None:
            out.flagged[row["category"]] += 1
    if args.keep:
        shutil.copy2(work / "review.json", args.keep / f"{kind}-{head[:8]}.json")
        (args.keep / f"{kind}-{head[:8]}.log").write_text(done.stderr, encoding="utf-8")
    return out


def caught(found: Review) -> bool:
    """A planted head fails the check with a row of its own kind flagged."""
    return found.status == 1 and found.flagged[EXPECTED[found.kind]] > 0


def _line(r: Review) -> str:
    return f"{r.wall:.0f} s (" + ", ".join(f"{k} {v:.0f} s" for k, v in r.steps.items()) + ")"


def report(reviews: list[Review], levels: dict[str, tuple[int, float]], budget: float) -> None:
    aa = [r for r in reviews if r.kind == "aa"]
    if aa:
        failing = sum(r.status != 0 for r in aa)
        print(f"\nA/A reviews failing the check: {failing} of {len(aa)}")
        print("| kind | tested rows per review | rows flagged in all A/A reviews | per-row rate |")
        print("|---|---|---|---|")
        for tested_kind in ("time", "compile", "memory"):
            tested = sum(r.tested[tested_kind] for r in aa)
            n_flagged = sum(r.flagged[tested_kind] for r in aa)
            rate = n_flagged / tested if tested else 0.0
            print(f"| {tested_kind} | {tested // len(aa)} | {n_flagged} | {rate:.2%} |")
    by_level = [(name, [r for r in reviews if r.kind == name]) for name in LEVELS]
    if any(found for _, found in by_level):
        print(
            "\n| planted warm time | N more tanh | in the pinned loop "
            "| Predict.time_warm's paired ratios in the reviews (median) "
            "| found (exit 1, a warm-time row) |"
        )
        print("|---|---|---|---|---|")
        for name, found in by_level:
            if found:
                n, measured = levels[name]
                hits = sum(caught(r) for r in found)
                ratios = [ratio for r in found for _, ratio, _ in r.predict]
                median = f"{statistics.median(ratios):.3f}x" if ratios else "no row"
                print(
                    f"| +{LEVELS[name]:.0%} | {n} | {measured:+.1%} | {median} "
                    f"| {hits} of {len(found)} |"
                )
    others = [r for r in reviews if r.kind != "aa" and r.kind not in LEVELS]
    if others:
        print("\n| planted head | caught (exit 1, its kind flagged) | flagged rows |")
        print("|---|---|---|")
        for r in others:
            flagged = ", ".join(f"{n} {k}" for k, n in sorted(r.flagged.items())) or "none"
            print(f"| {r.kind} | {'yes' if caught(r) else 'NO'} | {flagged} |")
    walls = [r.wall for r in reviews]
    if walls:
        over = sum(w > budget for w in walls)
        print(
            f"\nwall time per review: {min(walls):.0f} to {max(walls):.0f} s, median "
            f"{statistics.median(walls):.0f} s; over the {budget:.0f} s budget: {over} of "
            f"{len(walls)}"
        )


def _seconds(text: str) -> float:
    """``8m``, ``90s``, ``480`` or ``none`` in seconds (as ``jaxbench review --budget``)."""
    text = text.strip().lower()
    if text in ("none", "0"):
        return float("inf")
    for unit, scale in (("min", 60.0), ("m", 60.0), ("h", 3600.0), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suite", choices=("project", "mcmc"), default="project")
    parser.add_argument("--aa", type=int, default=20, help="A/A reviews (default: 20)")
    parser.add_argument(
        "--planted", default="warm2,warm3,warm5", help="planted heads, comma-separated"
    )
    parser.add_argument(
        "--repeat-planted", type=int, default=1, help="reviews of each planted head"
    )
    parser.add_argument("--budget", default="8m", help="jaxbench review --budget (default: 8m)")
    parser.add_argument("-b", "--bench", action="append", help="jaxbench review -b (repeatable)")
    parser.add_argument("--keep", type=Path, help="keep each review's JSON and output here")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument(
        "--stop-after",
        default="none",
        help="start no review after this long (e.g. 130m; default: none); "
        "the tables cover the reviews done",
    )
    args = parser.parse_args()
    known = MCMC_PLANTS if args.suite == "mcmc" else {**PLANTS, **LEVELS}
    planted = [k for k in args.planted.split(",") if k]
    for kind in planted:
        if kind not in known:
            raise SystemExit(f"--planted: unknown head {kind!r}; choose from {', '.join(known)}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    budget = _seconds(args.budget)
    stop_after = _seconds(args.stop_after)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-review-"))
    root = work / "repo"
    if root.exists():
        raise SystemExit(f"--workdir: {root} exists (an earlier run's); give a new folder")
    clock = time.perf_counter()
    levels: dict[str, tuple[int, float]] = {}
    plants = dict(PLANTS)
    wanted_levels = {k: LEVELS[k] for k in planted if k in LEVELS}
    if wanted_levels and len(wanted_levels) < len(planted):
        raise SystemExit(
            "--planted: review the warm-time levels on their own (their base runs predict's "
            "extra reduction; the other heads plant on this project's predict)"
        )
    if wanted_levels:
        levels = calibrate(wanted_levels)
        for name, (n, measured) in list(levels.items()):
            target = LEVELS[name]
            if not target / 2 <= measured <= target * 2:
                # the extra reduction is a kernel of its own: its launch alone may cost more
                # than the level, and a head labelled +2 % that is +12 % measures nothing
                print(
                    f"calibrated {name}: {n} tanh measured {measured:+.1%} in the pinned loop, "
                    f"not +{target:.0%}: the plant's own cost is more than that level; "
                    f"{name} left out",
                    flush=True,
                )
                del levels[name]
                planted.remove(name)
                continue
            plants[name] = EXTRA_WORK.format(n=BASE_N + n)
            print(f"calibrated {name}: {n} tanh, {measured:+.1%} in the pinned loop", flush=True)
        if not planted and not args.aa:
            raise SystemExit("nothing left to review: every planted level was left out")
    base_predict = EXTRA_WORK.format(n=BASE_N) if wanted_levels else PREDICT
    base = make_mcmc(root) if args.suite == "mcmc" else make_project(root, base_predict)
    print(f"setup: {time.perf_counter() - clock:.0f} s; suite {args.suite}", flush=True)
    print(f"settings: jaxbench review's (ReviewSettings), --budget {args.budget}", flush=True)

    reviews: list[Review] = []
    # Interleaved: each A/A review followed by each planted head, so that the
    # machine's mood falls on every condition alike.
    order: list[str] = []
    for i in range(max(args.aa, args.repeat_planted)):
        order += ["aa"] * (i < args.aa) + planted * (i < args.repeat_planted)
    for index, kind in enumerate(order):
        if time.perf_counter() - clock > stop_after:
            print(
                f"--stop-after {args.stop_after}: stopped after {index} of {len(order)} reviews",
                flush=True,
            )
            break
        head = make_head(root, base, args.suite, kind, index, plants, base_predict)
        found = review(root, base, head, kind, args)
        reviews.append(found)
        flagged = ", ".join(f"{n} {k}" for k, n in sorted(found.flagged.items())) or "none"
        verdict = ""
        if kind != "aa":
            verdict = f"{'caught' if caught(found) else 'NOT caught'} by {EXPECTED[kind]}, "
        predict = ""
        if args.suite == "project":  # the scratch project's predict carries the plants
            ratios = ", ".join(f"({p}) {r:.3f}x {v}" for p, r, v in found.predict)
            predict = f"; Predict.time_warm {ratios or 'no row'}"
        print(
            f"review {index + 1} ({kind}): exit {found.status}, {verdict}flagged {flagged}; "
            f"{_line(found)}; {found.summary}{predict}",
            flush=True,
        )
    report(reviews, levels, budget)


if __name__ == "__main__":
    main()
