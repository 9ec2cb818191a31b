"""An A/A history measured for real, some runs under load: ``compare`` across runs on it.

Issue 29's goal, measured rather than read off the committed history: a
scratch repository of this project (``bench_review.make_repo``: the suite and
the library, one environment, jax 0.10.2) gets ``--commits`` commits that
change only its README, so the library code is identical at every one. Each
commit is measured in **its own** ``asv run`` (the warm times, ``-b
--bench``, samples recorded), one after the other. For every run whose
number is in the loaded half (runs 2-3, 6-7, ...: pairs of loaded and quiet
runs alternate, so adjacent commits meet loaded against quiet, quiet against
quiet and loaded against loaded), a background process spins on one CPU for
the whole run, as another job on a shared runner would.

Then, on that results folder (results only, no more measuring),
``bench_cross_run``'s A/A (every pair of commits, as ``jaxbench compare``
judges two commits of separate runs: flagged, tested and untested rows, and
why), the spread between runs per series, and the planted slowdown (each
commit's warm times multiplied by ``--factor`` in a copy, compared with the
commit before it, the history cut to the ``k`` nearest other commits).
``--planted-quiet`` repeats the planted count on the quiet runs' commits
alone: what a history measured on an otherwise idle runner finds.

Usage::

    .venv/bin/python bench/bench_aa_history.py --commits 16 --workdir /tmp/aa-history
    .venv/bin/python bench/bench_aa_history.py --reuse /tmp/aa-history   # analyse again

About 40 s a commit here (the environment once, about a minute).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import bench_cross_run
from scratch_repo import ASV, MACHINE, asv_env, git, make_repo, sh

_SPIN = "import time\nwhile True:\n    sum(range(100000))\n"


def loaded(run: int) -> bool:
    """Runs 2-3, 6-7, 10-11, ... (0-based: 1-2, 5-6, ...): half of them, in pairs."""
    return (run + 1) // 2 % 2 == 1


def measure(root: Path, commits: int, bench: str) -> list[tuple[str, bool]]:
    """Commit and measure; returns (commit, loaded) in order."""
    env = asv_env()
    sh([sys.executable, "-m", "jaxbench", "machine", "--machine", MACHINE], root, env=env)
    done: list[tuple[str, bool]] = []
    for run in range(commits):
        if run:
            with (root / "README.md").open("a", encoding="utf-8") as readme:
                readme.write(f"\nA/A commit {run}: no library change.\n")
            git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", f"aa {run}")
        commit = git(root, "rev-parse", "HEAD")
        load = loaded(run)
        spinner = subprocess.Popen([sys.executable, "-c", _SPIN]) if load else None
        start = time.perf_counter()
        try:
            sh(
                [
                    ASV,
                    "run",
                    "--machine",
                    MACHINE,
                    "--record-samples",
                    "--show-stderr",
                    "-b",
                    bench,
                    f"{commit}^!",
                ],
                root,
                env=env,
                ok=(0, 2),
            )
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
        took = time.perf_counter() - start
        print(
            f"run {run + 1:2d}/{commits}  {commit[:8]}  "
            f"{'loaded' if load else 'quiet '}  {took:5.1f} s",
            flush=True,
        )
        done.append((commit, load))
    (root / "aa-history.json").write_text(json.dumps(done), encoding="utf-8")
    return done


def quiet_copy(root: Path, runs: list[tuple[str, bool]]) -> Path:
    """The results folder with the loaded runs' files left out."""
    import shutil

    copy = root / "results-quiet"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / "results", copy)
    for commit, load in runs:
        if load:
            for path in copy.glob(f"*/{commit[:8]}-*.json"):
                path.unlink()
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--bench", default=r"\.time_", help="asv -b (default: the warm times)")
    parser.add_argument("--workdir", type=Path, help="scratch repository (must not exist)")
    parser.add_argument("--reuse", type=Path, help="analyse a history this script measured")
    parser.add_argument("--factor", type=float, action="append")
    parser.add_argument("--planted-quiet", action="store_true")
    args = parser.parse_args()
    if args.reuse:
        root = args.reuse
        runs = [tuple(r) for r in json.loads((root / "aa-history.json").read_text())]
    else:
        if args.workdir is None:
            raise SystemExit("bench_aa_history: give --workdir (a new folder) or --reuse")
        if args.workdir.exists():
            raise SystemExit(f"bench_aa_history: {args.workdir} exists: give a new folder")
        root = args.workdir
        make_repo(root)
        start = time.perf_counter()
        runs = measure(root, args.commits, args.bench)
        print(f"measured {len(runs)} commits in {time.perf_counter() - start:.0f} s")
    print("loaded runs:", ", ".join(c[:8] for c, load in runs if load))
    results = root / "results"
    bench_cross_run.aa(results, repo=root)
    bench_cross_run.spreads(results)
    for factor in args.factor or [1.2]:
        bench_cross_run.planted(results, factor)
        if args.planted_quiet:
            print("quiet runs only:")
            bench_cross_run.planted(quiet_copy(root, runs), factor)


if __name__ == "__main__":
    main()
