"""``jaxbench bisect``'s stated power: which steps it finds, how often it is wrong, how long.

A planted history, measured for real: a scratch git repository of a tiny
pure-Python library (``toylib``) whose functions an asv suite calls:
``Work.time_work`` times ``toylib.work()`` warm (a real loop of ``WORK``
additions), and ``WorkFigures`` stands in for a JAX suite's figures process:
its ``setup_cache`` times ``toylib.build()`` (a real loop of ``BUILD``
additions) once per fresh process as ``track_first_call_seconds``, and
reports ``toylib.FLOPS`` as ``track_work_flops`` (exact, as XLA's cost
analysis). ``--commits`` commits; commit ``--warm-at`` makes ``work()`` do
``--warm-step`` more (and its FLOPS grow as much), commit ``--compile-at``
makes ``build()`` do ``--compile-step`` more; the others change the README
only. Every side runs this interpreter (``--python``) with its commit built
by ``pip wheel`` of its checkout in front, as the lockstep commands build it.

Then ``--tries`` bisects of the whole range (each must name both commits,
in at most ``ceil(log2 n) + 2`` steps) and ``--aa`` bisects of a range of
identical code (a second repository of ``--commits`` README-only commits:
each must say "no single step"), one after the other, and a table: per try
the answer, the steps, the rounds and the wall time.

Usage::

    .venv/bin/python bench/bench_bisect.py --workdir /tmp/bisect-bench
    .venv/bin/python bench/bench_bisect.py --warm-step 1.05 --tries 5 --aa 0

About 1 min a try of the planted range on a quiet 2-core machine, under
half a minute an A/A try.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "toy-py3.11"
#: KiB that work() hashes a call (~0.2 ms), MiB that build() hashes a process (~0.2 s)
WORK = 200
BUILD = 128
FLOPS = 1000
#: SHA-256 of a buffer: real work in C, whose speed varies far less from process
#: to process than an interpreted loop's (2 % against 23 % between fresh processes here)
LIBRARY = """\
import hashlib

WORK = {work}
BUILD = {build}
FLOPS = {flops}
_KIB = bytes(range(256)) * 4
_WORK = _KIB * WORK
_MIB = _KIB * 1024


def work():
    return hashlib.sha256(_WORK).digest()


def build():
    # the stand-in for a model's first call: tracing, lowering and compiling it
    digest = hashlib.sha256()
    for _ in range(BUILD):
        digest.update(_MIB)
    return digest.digest()
"""
SUITE = """\
import time

import toylib


class Work:
    # short samples (~0.4 ms): on a busy machine most longer ones are cut by other
    # processes' time slices, and the round's median of paired ratios with them
    number = 2

    def time_work(self):
        toylib.work()


class WorkFigures:
    def setup_cache(self):
        # the process's CPU time: what build() costs, not how busy the machine is
        start = time.process_time()
        toylib.build()
        return {"first_call": time.process_time() - start, "flops": float(toylib.FLOPS)}

    def track_first_call_seconds(self, cache):
        return cache["first_call"]

    def track_work_flops(self, cache):
        return cache["flops"]
"""
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "toylib"
version = "0.1.0"

[tool.setuptools.packages.find]
where = ["src"]
"""


def git(root: Path, *args: str, date: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    if date is not None:
        env.update({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@dataclass(frozen=True)
class Planted:
    """A planted history: its root and commits (oldest first), and where the steps are."""

    root: Path
    commits: tuple[str, ...]
    #: indices into ``commits`` of the first commit of each step (None: not planted)
    warm_at: int | None
    compile_at: int | None


def make_repo(
    root: Path,
    commits: int,
    *,
    warm_at: int | None,
    compile_at: int | None,
    warm_step: float = 1.2,
    compile_step: float = 1.5,
) -> Planted:
    """``commits`` commits of toylib; from ``warm_at`` (an index) on, work() does
    ``warm_step`` times the loop (and its FLOPS as much), from ``compile_at`` build()
    ``compile_step`` times; every other commit changes the README only."""
    (root / "src" / "toylib").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "bench.py").write_text(SUITE)
    (root / ".gitignore").write_text("/results/\n/html/\n/.asv*\n/env/\n")
    conf = {
        "version": 1,
        "project": "toylib",
        "repo": ".",
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": ["3.11"],
        "results_dir": "results",
        "html_dir": "html",
        "benchmark_dir": "benchmarks",
        "build_command": [
            "python -m pip wheel --no-deps --no-build-isolation -w {build_cache_dir} {build_dir}"
        ],
        # the lockstep workers fork from a server that imported the suite once
        "launch_method": "forkserver",
    }
    (root / "asv.conf.json").write_text(json.dumps(conf, indent=2))
    (root / "pyproject.toml").write_text(PYPROJECT)
    git(root, "init", "-q", "-b", "main")
    hashes = []
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for i in range(commits):
        warm = warm_at is not None and i >= warm_at
        slow_build = compile_at is not None and i >= compile_at
        text = LIBRARY.format(
            work=round(WORK * warm_step) if warm else WORK,
            build=round(BUILD * compile_step) if slow_build else BUILD,
            flops=round(FLOPS * warm_step) if warm else FLOPS,
        )
        (root / "src" / "toylib" / "__init__.py").write_text(text)
        (root / "README.md").write_text(f"toylib, revision {i}\n")
        git(root, "add", "-A")
        subject = f"c{i}: README"
        if i == warm_at:
            subject = f"c{i}: work() does {warm_step - 1:.0%} more"
        elif i == compile_at:
            subject = f"c{i}: build() does {compile_step - 1:.0%} more"
        when = (start + datetime.timedelta(hours=i)).isoformat()
        git(root, "commit", "-q", "-m", subject, date=when)
        hashes.append(git(root, "rev-parse", "HEAD"))
    return Planted(root, tuple(hashes), warm_at, compile_at)


def bisect(
    planted: Planted, *extra: str, python: str = sys.executable, timeout: float = 1800
) -> tuple[int, dict[str, Any], str, float]:
    """``jaxbench bisect`` over the whole range: (exit status, its JSON, stderr, seconds)."""
    clock = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "jaxbench", "bisect", planted.commits[0], planted.commits[-1],
         "--python", python, "--env", ENV, "--format", "json", *extra],
        cwd=planted.root, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - clock
    doc = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, doc, done.stderr, seconds


def budget(commits: int) -> int:
    """Steps allowed over a range of ``commits`` commits: ceil(log2 n) + 2, n after GOOD."""
    return math.ceil(math.log2(commits - 1)) + 2


def named(doc: dict[str, Any]) -> dict[str, int]:
    """Each benchmark whose single step was found, and the index of its commit."""
    return {
        f["benchmark"].rsplit(".", 1)[-1]: f["index"]
        for f in doc.get("findings", [])
        if f["outcome"] == "single"
    }


def _row(label: str, status: int, doc: dict[str, Any], seconds: float, right: bool) -> str:
    steps = doc.get("steps", [])
    rounds = "/".join(str(s["rounds"]) for s in steps)
    found = ", ".join(f"{k}@{v}" for k, v in sorted(named(doc).items())) or "no single step"
    return (
        f"{label:<8} {'right' if right else 'WRONG':<6} exit {status}  {len(steps)} steps "
        f"(rounds {rounds})  {seconds:6.0f} s  {found}"
    )


def _keep(folder: Path | None, label: str, doc: dict[str, Any], err: str) -> None:
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{label}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        (folder / f"{label}.err").write_text(err, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=17)
    parser.add_argument("--warm-at", type=int, default=5)
    parser.add_argument("--compile-at", type=int, default=11)
    parser.add_argument("--warm-step", type=float, default=1.2)
    parser.add_argument("--compile-step", type=float, default=1.5)
    parser.add_argument("--tries", type=int, default=3, help="bisects of the planted range")
    parser.add_argument("--aa", type=int, default=10, help="bisects of identical code")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--keep", type=Path, default=None, help="write each bisect's JSON and stderr here"
    )
    parser.add_argument("bisect_args", nargs="*", help="more jaxbench bisect options (after --)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-bisect-"))
    work.mkdir(parents=True, exist_ok=True)
    limit = budget(args.commits)
    print(f"{args.commits} commits ({args.commits - 1} after GOOD): at most {limit} steps")
    rows, wrong = [], {"planted": 0, "aa": 0}
    if args.tries:
        planted = make_repo(
            work / "planted", args.commits, warm_at=args.warm_at, compile_at=args.compile_at,
            warm_step=args.warm_step, compile_step=args.compile_step,
        )  # fmt: skip
        want = {"time_work": args.warm_at, "track_work_flops": args.warm_at,
                "track_first_call_seconds": args.compile_at}  # fmt: skip
        for i in range(args.tries):
            status, doc, err, seconds = bisect(planted, *args.bisect_args)
            _keep(args.keep, f"planted-{i + 1}", doc, err)
            right = named(doc) == want and len(doc.get("steps", [])) <= limit
            wrong["planted"] += not right
            rows.append(_row(f"step {i + 1}", status, doc, seconds, right))
            print(rows[-1], flush=True)
            if not doc:
                print(err[-2000:], file=sys.stderr)
    if args.aa:
        same = make_repo(work / "aa", args.commits, warm_at=None, compile_at=None)
        for i in range(args.aa):
            status, doc, err, seconds = bisect(same, *args.bisect_args)
            _keep(args.keep, f"aa-{i + 1}", doc, err)
            right = status == 1 and not doc.get("single_step", True)
            wrong["aa"] += not right
            rows.append(_row(f"A/A {i + 1}", status, doc, seconds, right))
            print(rows[-1], flush=True)
            if not doc:
                print(err[-2000:], file=sys.stderr)
    print(
        f"planted: {args.tries - wrong['planted']} of {args.tries} right "
        f"(+{args.warm_step - 1:.0%} warm at {args.warm_at}, +{args.compile_step - 1:.0%} first "
        f"call at {args.compile_at}); A/A: {args.aa - wrong['aa']} of {args.aa} right"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
