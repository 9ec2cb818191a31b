"""What the main job (``make bench``) spends its time on, step by step.

In a scratch clone of this repository (HEAD), runs the steps ``make bench``
runs, each timed on its own, with this checkout's ``.venv`` tools:

1. ``jaxbench machine`` (the machine file);
2. ``asv setup`` (the environments of asv.conf.json's matrix);
3. ``asv run --record-samples`` once per commit (newest ``--commits`` of
   HEAD's first parents), so each commit's cost shows;
4. ``jaxbench pair-history`` over the same commits (each pair's time is read
   from its own line);
5. ``jaxbench publish`` and ``jaxbench regressions``.

Prints the breakdown (seconds, share of the whole) and the ratio of the whole
job to its own ``asv run`` step alone (environments + asv per commit): the
cost of pairing and publishing on top of what asv does anyway. Then how long
the pairs spent inside their timed calls (both sides), against what a job of
1.2x its ``asv run`` would leave the pairs: the part of the pairs that no
saving on starting processes, compiling or warming up can remove.
``--from-log`` reads the same from the output of a finished ``make bench``
(its ``done in`` line and pair-history's lines) and measures nothing. The review's
steps (asv run, install, ab, first-call, compare) are timed per review by
``bench/bench_review.py``.

Full size is the whole suite (tens of minutes on 2 cores); ``-b`` cuts it::

    .venv/bin/python bench/bench_cost.py --commits 2 -b 'Predict\\.' --rounds 4
    .venv/bin/python bench/bench_cost.py --from-log make-bench.log
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MACHINE = "cost-bench"
#: ``jaxbench pair-history``'s line for one measured pair (commands/pair_history.py);
#: since 2026-12-04 it also says how long the timed calls of both sides took.
PAIR_LINE = re.compile(
    r"^jaxbench pair-history: (?P<pair>[0-9a-f]+\.\.[0-9a-f]+) \[(?P<env>[^\]]+)\]: "
    r".* in (?P<seconds>[0-9.]+) s(?: \(timed calls (?P<timed>[0-9.]+) s, both sides\))?;",
    re.MULTILINE,
)
#: ``make bench``'s last line (jaxbench progress, render/progress.py's ``done_line``).
DONE_LINE = re.compile(r"^make bench: done in (?P<total>[^(\n]+?) \((?P<parts>[^)]*)\)$", re.M)
#: One ``format_duration`` (``42 s``, ``3 min 05 s``, ``1 h 02 min``).
DURATION = re.compile(r"^(?:(?P<h>\d+) h)? ?(?:(?P<min>\d+) min)? ?(?:(?P<s>\d+) s)?$")
#: The steps that are ``asv run`` itself (what asv costs without jaxbench).
ASV_STEPS = ("environments", "asv run")
#: The step that is the paired history (bench_cost's own name, make bench's).
PAIR_STEPS = ("pairs", "paired history")


@dataclass(frozen=True)
class Step:
    """One timed step of the job: its name and its wall time in seconds."""

    name: str
    seconds: float


def pair_times(log: str) -> list[Step]:
    """Each measured pair's time, from ``jaxbench pair-history``'s stderr."""
    return [
        Step(f"  pair {m['pair']} [{m['env']}]", float(m["seconds"]))
        for m in PAIR_LINE.finditer(log)
    ]


def pairs_timed(log: str) -> float | None:
    """Seconds inside the pairs' timed calls, both sides, summed over every pair
    (None when no pair line says: a pair-history older than the figure)."""
    timed = [float(m["timed"]) for m in PAIR_LINE.finditer(log) if m["timed"] is not None]
    return sum(timed) if timed else None


def seconds_of(duration: str) -> float:
    """``3 min 05 s`` -> 185.0 (render/progress.py's ``format_duration``, read back)."""
    m = DURATION.match(duration.strip())
    if m is None or not any(m.groups()):
        raise ValueError(f"not a duration: {duration!r}")
    h, mins, secs = (int(m[k] or 0) for k in ("h", "min", "s"))
    return 3600.0 * h + 60.0 * mins + secs


def steps_of_make_log(log: str) -> list[Step]:
    """The steps of a finished ``make bench`` from its own log: the ``done in`` line's
    parts (asv run, paired history, publish, regressions), each pair below its step."""
    done = DONE_LINE.search(log)
    if done is None:
        raise SystemExit("no 'make bench: done in ...' line: give the log of a finished make bench")
    steps = []
    for part in done["parts"].split(", "):
        # a part is "NAME DURATION"; the name may have a space ("asv run", "paired history")
        words = part.split(" ")
        cut = next(i for i, w in enumerate(words) if w[:1].isdigit())
        name, duration = " ".join(words[:cut]), " ".join(words[cut:])
        steps.append(Step(name, seconds_of(duration)))
        if name == "paired history":
            steps.extend(pair_times(log))
    return steps


def floor_line(steps: Sequence[Step], timed: float, at_once: int) -> str:
    """What the pairs' timed calls alone take against what the 1.2x goal leaves them."""
    top = [s for s in steps if not s.name.startswith(" ")]
    asv = sum(s.seconds for s in top if s.name.startswith(ASV_STEPS))
    pairs = sum(s.seconds for s in top if s.name in PAIR_STEPS)
    return (
        f"pairs: {pairs:.1f} s, of which timed calls {timed:.1f} s (both sides; at "
        f"{at_once} round(s) at once, at least {timed / at_once:.1f} s of wall); a 1.2x job "
        f"leaves the pairs and the rest {0.2 * asv:.1f} s"
    )


def job_ratio(steps: Sequence[Step]) -> float | None:
    """The whole job's time over its ``asv run`` steps' (None without any)."""
    top = [s for s in steps if not s.name.startswith(" ")]
    asv = sum(s.seconds for s in top if s.name.startswith(ASV_STEPS))
    return sum(s.seconds for s in top) / asv if asv > 0 else None


def format_breakdown(steps: Sequence[Step]) -> str:
    """The table: each step's seconds and share (indented rows are parts of the row above)."""
    total = sum(s.seconds for s in steps if not s.name.startswith(" "))
    width = max([len(s.name) for s in steps] + [len("whole job")])
    lines = [f"{'step':<{width}}  {'seconds':>9}  {'share':>6}"]
    for s in steps:
        share = 100 * s.seconds / total if total else 0.0
        lines.append(f"{s.name:<{width}}  {s.seconds:>9.1f}  {share:>5.1f}%")
    lines.append(f"{'whole job':<{width}}  {total:>9.1f}  {100.0:>5.1f}%")
    ratio = job_ratio(steps)
    if ratio is not None:
        lines.append(f"whole job / its asv run alone: {ratio:.2f}x")
    return "\n".join(lines)


def _run(args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """Wall time and stderr of one command; exits on an unexpected status."""
    env = {**os.environ, "JAXBENCH_MACHINE": MACHINE, "PYTHONUNBUFFERED": "1"}
    env.pop("JAXBENCH_RESULTS_DIR", None)
    clock = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - clock
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return took, done.stderr


def measure(
    root: Path, commits: int, bench: str | None, pair_args: Sequence[str]
) -> tuple[list[Step], str]:
    """Clone this repository into ``root`` and time the main job's steps there (and
    ``jaxbench pair-history``'s output)."""
    subprocess.run(["git", "clone", "-q", str(PROJECT), str(root)], check=True)
    hashes = subprocess.run(
        ["git", "rev-list", "--first-parent", f"--max-count={commits}", "HEAD"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    (root / ".asv").mkdir(exist_ok=True)
    (root / ".asv" / "commits.txt").write_text("\n".join(hashes) + "\n", encoding="utf-8")
    selected = ["-b", bench] if bench else []
    asv, jaxbench = str(BIN / "asv"), str(BIN / "jaxbench")
    steps = [Step("machine", _run([jaxbench, "machine", "--machine", MACHINE], root)[0])]
    steps.append(Step("environments", _run([asv, "setup"], root)[0]))
    for commit in reversed(hashes):  # oldest first, as asv runs a HASHFILE
        one = root / ".asv" / f"{commit[:8]}.txt"
        one.write_text(commit + "\n", encoding="utf-8")
        run = [asv, "run", "--machine", MACHINE, "--skip-existing", "--record-samples"]
        took, _ = _run([*run, *selected, f"HASHFILE:{one}"], root, ok=(0, 2))
        steps.append(Step(f"asv run {commit[:8]}", took))
    pair_cmd = [jaxbench, "pair-history", "--machine", MACHINE, "--commits", ".asv/commits.txt"]
    took, log = _run([*pair_cmd, *selected, *pair_args], root)
    steps.append(Step("pairs", took))
    steps.extend(pair_times(log))
    steps.append(Step("publish", _run([jaxbench, "publish"], root)[0]))
    steps.append(Step("regressions", _run([jaxbench, "regressions"], root, ok=(0, 1))[0]))
    return steps, log


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--commits", type=int, default=3, help="commits measured (make: 3)")
    parser.add_argument("-b", "--bench", help="asv's -b regex, for asv run and pair-history")
    parser.add_argument("--rounds", type=int, help="pair-history --rounds (default: its own)")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument(
        "--from-log",
        type=Path,
        metavar="LOG",
        help="measure nothing: the breakdown of a finished `make bench` from its output",
    )
    parser.add_argument(
        "--at-once",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="pair rounds run at once (pair-history's: one a CPU; default: %(default)s)",
    )
    args = parser.parse_args()
    if args.commits < 1:
        parser.error("--commits must be 1 or more")
    if args.from_log is not None:
        try:
            log = args.from_log.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise SystemExit(f"--from-log: cannot read {args.from_log}: {exc.strerror}") from None
        steps = steps_of_make_log(log)
    else:
        pair_args = ["--rounds", str(args.rounds)] if args.rounds else []
        with tempfile.TemporaryDirectory(prefix="jaxbench-cost-") as scratch:
            root = (args.workdir or Path(scratch)) / "repo"
            steps, log = measure(root, args.commits, args.bench, pair_args)
    print(format_breakdown(steps))
    timed = pairs_timed(log)
    if timed is not None:
        print(floor_line(steps, timed, args.at_once))


if __name__ == "__main__":
    main()
