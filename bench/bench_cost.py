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
cost of pairing and publishing on top of what asv does anyway. The review's
steps (asv run, install, ab, first-call, compare) are timed per review by
``bench/bench_review.py``.

Full size is the whole suite (tens of minutes on 2 cores); ``-b`` cuts it::

    .venv/bin/python bench/bench_cost.py --commits 2 -b 'Predict\\.' --rounds 4
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
#: ``jaxbench pair-history``'s line for one measured pair (commands/pair_history.py).
PAIR_LINE = re.compile(
    r"^jaxbench pair-history: (?P<pair>[0-9a-f]+\.\.[0-9a-f]+) \[(?P<env>[^\]]+)\]: "
    r".* in (?P<seconds>[0-9.]+) s;",
    re.MULTILINE,
)
#: The steps that are ``asv run`` itself (what asv costs without jaxbench).
ASV_STEPS = ("environments", "asv run ")


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


def measure(root: Path, commits: int, bench: str | None, pair_args: Sequence[str]) -> list[Step]:
    """Clone this repository into ``root`` and time the main job's steps there."""
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
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--commits", type=int, default=3, help="commits measured (make: 3)")
    parser.add_argument("-b", "--bench", help="asv's -b regex, for asv run and pair-history")
    parser.add_argument("--rounds", type=int, help="pair-history --rounds (default: its own)")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    if args.commits < 1:
        parser.error("--commits must be 1 or more")
    pair_args = ["--rounds", str(args.rounds)] if args.rounds else []
    with tempfile.TemporaryDirectory(prefix="jaxbench-cost-") as scratch:
        root = (args.workdir or Path(scratch)) / "repo"
        steps = measure(root, args.commits, args.bench, pair_args)
    print(format_breakdown(steps))


if __name__ == "__main__":
    main()
