"""Regression scan time: ``jaxbench regressions`` versus ``asv publish``, same history.

Writes a synthetic history (1,000 commits x 50 benchmarks, one environment,
real asv format-2 files written by asv's own ``Results`` class, a real git
repository made with ``git fast-import``) with one planted 30 % step, then
times, on the same files:

* jaxbench: ``load_history`` + ``find_regressions`` (in this process);
* ``asv publish`` (a subprocess, as users run it).

Prints both times, their ratio and whether each found the planted step.
Usage: ``python bench/bench_detect.py [--commits N] [--benchmarks M]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEP_BENCH = 17
DAY_S = 86_400
T0 = 1_600_000_000


def make_repo(root: Path, n: int) -> list[tuple[str, int]]:
    """A git repository of ``n`` commits on ``main``; returns (hash, date ms), oldest first."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream = []
    for i in range(n):
        msg = f"commit {i}\n"
        content = f"{i}\n"
        stream.append(
            f"commit refs/heads/main\nmark :{i + 1}\n"
            f"committer B <b@example.com> {T0 + i * DAY_S} +0000\n"
            f"data {len(msg)}\n{msg}"
            + (f"from :{i}\n" if i else "")
            + f"M 644 inline file.txt\ndata {len(content)}\n{content}\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"], input="".join(stream).encode(), cwd=root, check=True
    )
    out = subprocess.run(
        ["git", "rev-list", "--reverse", "main"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [(h, (T0 + i * DAY_S) * 1000) for i, h in enumerate(out)]


def write_results(results: Path, commits: list[tuple[str, int]], n_bench: int) -> str:
    """Result files for every commit; returns the planted step's first commit."""
    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    names = [f"workloads.W{j:02d}.time_warm" for j in range(n_bench)]
    benchmarks = {
        name: {
            "name": name,
            "params": [],
            "param_names": [],
            "type": "time",
            "unit": "seconds",
            "version": "1",
        }
        for name in names
    }
    util.write_json(str(results / "benchmarks.json"), benchmarks, api_version=2)
    util.write_json(str(results / "bench" / "machine.json"), {"machine": "bench"}, api_version=1)
    rng = random.Random(0)
    step_at = len(commits) * 2 // 3
    for i, (commit, date) in enumerate(commits):
        res = Results(
            {"machine": "bench", "python": "3.11"},
            {},
            commit,
            date,
            "3.11",
            "virtualenv-py3.11",
            {},
        )
        for j, name in enumerate(names):
            level = 1e-4 * (1 + j / 10) * (1.3 if j == STEP_BENCH and i >= step_at else 1.0)
            samples = [level * (1 + rng.gauss(0, 0.03)) for _ in range(10)]
            res.add_result(
                benchmarks[name],
                BenchmarkResult([level], [samples], [1], 0, "", None),
                record_samples=True,
            )
        res.save(str(results))
    return commits[step_at][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--benchmarks", type=int, default=50)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        root = Path(tmp)
        commits = make_repo(root / "repo", opts.commits)
        step_commit = write_results(root / "results", commits, opts.benchmarks)
        conf = {
            "version": 1,
            "project": "bench",
            "project_url": "http://example.com/",
            "repo": str(root / "repo"),
            "branches": ["main"],
            "dvcs": "git",
            "environment_type": "virtualenv",
            "results_dir": "results",
            "html_dir": "html",
        }
        (root / "asv.conf.json").write_text(json.dumps(conf))
        print(
            f"history: {opts.commits} commits x {opts.benchmarks} benchmarks, "
            f"planted +30 % step at {step_commit[:8]} in W{STEP_BENCH:02d}"
        )

        from jaxbench.analyse.detect import find_regressions
        from jaxbench.store.results import load_history

        start = time.perf_counter()
        regressions = find_regressions(load_history(root / "results"))
        ours = time.perf_counter() - start
        ours_found = [(r.key.benchmark, r.bad_commit[:8], round(r.ratio, 3)) for r in regressions]

        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "asv", "publish", "--config", str(root / "asv.conf.json")],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        theirs = time.perf_counter() - start
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            raise SystemExit("asv publish failed")
        data = json.loads((root / "html" / "regressions.json").read_text())["regressions"]
        asv_found = [(r[0], r[6]) for r in data]

        print(f"jaxbench load+detect: {ours:.2f} s   found: {ours_found}")
        print(f"asv publish:          {theirs:.2f} s   found: {asv_found}")
        print(f"ratio asv publish / jaxbench: {theirs / ours:.1f}x")
        planted = f"workloads.W{STEP_BENCH:02d}.time_warm"
        ours_ok = [(b, c) for b, c, _ in ours_found] == [(planted, step_commit[:8])]
        asv_ok = [b for b, _ in asv_found] == [planted]
        print(f"planted step the only one found: jaxbench {ours_ok}, asv publish {asv_ok}")


if __name__ == "__main__":
    main()
