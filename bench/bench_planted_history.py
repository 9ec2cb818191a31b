"""A planted memory regression in a real asv history: does ``jaxbench regressions`` list it
at its commit, and nothing else?

Issue 26's history side, measured rather than built from synthetic values: a
scratch repository of this project (``bench_review.make_repo``: the suite and
the library, one environment, jax 0.10.2) gets ``--before`` commits that
change only the README, then the planted commit (``--plant``, one of
``bench_review.PLANTS``: ``memory`` keeps 32 MiB of host memory from each
trace of predict, ``memory25`` 4 MiB, about a quarter of what predict's
preparation adds to a fresh process), then ``--after`` more README-only
commits that keep it. Each commit is measured in its own ``asv run`` of the
``-b --bench`` benchmarks (default: ``Predict``'s warm time, figures and peak
memory), one after the other, as ``make bench`` measures a history.

Then ``jaxbench regressions`` on that history (text and JSON) and the verdict:
which events it lists, whether one is a memory event at the planted commit,
and whether anything is listed elsewhere.

Usage::

    .venv/bin/python bench/bench_planted_history.py --plant memory --workdir /tmp/ph-memory
    .venv/bin/python bench/bench_planted_history.py --plant memory25 --workdir /tmp/ph-m25

About 25 s a commit here (the environment once, about a minute).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench_review import PLANTS, PREDICT
from scratch_repo import ASV, MACHINE, asv_env, git, make_repo, sh

_COMMIT = ("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam")


def measure(root: Path, before: int, plant: str, after: int, bench: str) -> tuple[str, list[str]]:
    """Commit and measure each commit in its own asv run; returns (planted commit, commits)."""
    env = asv_env()
    sh([sys.executable, "-m", "jaxbench", "machine", "--machine", MACHINE], root, env=env)
    commits: list[str] = []
    planted = ""
    for n in range(before + 1 + after):
        if n == before:
            path = root / "src" / "jaxbench" / "measure" / "workloads.py"
            text = path.read_text(encoding="utf-8")
            assert PREDICT in text, "predict changed: update PREDICT in bench_review.py"
            path.write_text(text.replace(PREDICT, PLANTS[plant]), encoding="utf-8")
            git(root, *_COMMIT, f"planted: {plant}")
        elif n:
            with (root / "README.md").open("a", encoding="utf-8") as readme:
                readme.write(f"\ncommit {n}: no library change.\n")
            git(root, *_COMMIT, f"readme {n}")
        commit = git(root, "rev-parse", "HEAD")
        planted = commit if n == before else planted
        start = time.perf_counter()
        sh(
            [ASV, "run", "--machine", MACHINE, "--record-samples", "-b", bench, f"{commit}^!"],
            root,
            env=env,
            ok=(0, 2),
        )
        mark = "  <- planted" if n == before else ""
        took = time.perf_counter() - start
        print(f"commit {n + 1:2d}  {commit[:8]}  {took:5.1f} s{mark}", flush=True)
        commits.append(commit)
    return planted, commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plant", choices=sorted(PLANTS), default="memory")
    parser.add_argument("--before", type=int, default=5)
    parser.add_argument("--after", type=int, default=4)
    parser.add_argument("--bench", default=r"workloads\.Predict")
    parser.add_argument("--workdir", type=Path, required=True, help="a new folder")
    args = parser.parse_args()
    if args.workdir.exists():
        raise SystemExit(f"bench_planted_history: {args.workdir} exists: give a new folder")
    root = args.workdir
    make_repo(root)
    start = time.perf_counter()
    planted, commits = measure(root, args.before, args.plant, args.after, args.bench)
    print(f"measured {len(commits)} commits in {time.perf_counter() - start:.0f} s")
    jaxbench = [sys.executable, "-m", "jaxbench", "regressions", "--limit", "0"]
    print(sh(jaxbench, root, ok=(0, 1)).rstrip())
    listing = json.loads(sh([*jaxbench, "--format", "json"], root, ok=(0, 1)))
    events = listing["events"]
    at_plant = [e for e in events if e["bad_commit"].startswith(planted[:8])]
    elsewhere = [e for e in events if not e["bad_commit"].startswith(planted[:8])]
    kinds = sorted({k for e in at_plant for k in e["kinds"]})
    print(
        f"planted {args.plant} at {planted[:8]} (commit {args.before + 1} of {len(commits)}): "
        f"{'LISTED' if 'memory' in kinds else 'NOT listed'} as memory at its commit "
        f"(kinds there: {', '.join(kinds) or 'none'}); {len(elsewhere)} event(s) elsewhere"
    )


if __name__ == "__main__":
    main()
