"""Regression scan time: ``jaxbench regressions`` and ``publish`` versus ``asv publish``.

Writes a synthetic history (1,000 commits x 50 benchmarks, one environment,
real asv format-2 files written by asv's own ``Results`` class, a real git
repository made with ``git fast-import``) with one planted 30 % step, then
times, on the same files, each as a fresh subprocess (imports included):

* ``jaxbench regressions --no-cache`` (cold), with each step fit: binseg
  (the default), asv's penalty search (``--detector asv``) and asv's default
  penalty (``--detector asv --quick``);
* ``jaxbench regressions`` after one more commit's results were added, the
  cache holding the rest (incremental), each fit;
* ``asv publish``, and ``jaxbench publish`` (which runs ``asv publish`` plus
  the scan): its added time.

Prints the times, ratios, and whether each found only the planted step.
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
#: (label, options) of each step fit timed
FITS: list[tuple[str, list[str]]] = [
    ("", []),
    (" --detector asv", ["--detector", "asv"]),
    (" --detector asv --quick", ["--detector", "asv", "--quick"]),
]
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


def write_results(
    results: Path, commits: list[tuple[str, int]], n_bench: int, *, only_last: bool = False
) -> str:
    """Result files for every commit (or the last one); returns the planted step's commit."""
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
    step_at = (len(commits) - (1 if only_last else 0)) * 2 // 3
    for i, (commit, date) in enumerate(commits):
        if only_last and i != len(commits) - 1:
            continue
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


def _timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        raise SystemExit(f"failed: {argv}")
    return elapsed, proc.stdout


def _found(stdout: str) -> list[tuple[str, str]]:
    return [(r["benchmark"], r["bad_commit"][:8]) for r in json.loads(stdout)["regressions"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--benchmarks", type=int, default=50)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        root = Path(tmp)
        commits = make_repo(root / "repo", opts.commits + 1)
        step_commit = write_results(root / "results", commits[:-1], opts.benchmarks)
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
        planted = [(f"workloads.W{STEP_BENCH:02d}.time_warm", step_commit[:8])]
        ours = [sys.executable, "-m", "jaxbench", "regressions", "--results", "results"]
        ours += ["--format", "json"]
        rows: list[tuple[str, float, bool]] = []
        cold = {}
        for label, extra in FITS:
            t, out = _timed([*ours, *extra, "--no-cache"], root)
            cold[label] = t
            rows.append((f"jaxbench regressions{label}, cold", t, _found(out) == planted))

        theirs, _out = _timed(
            [sys.executable, "-m", "asv", "publish", "--config", "asv.conf.json"], root
        )
        data = json.loads((root / "html" / "regressions.json").read_text())["regressions"]
        asv_ok = [r[0] for r in data] == [planted[0][0]]
        rows.append(("asv publish", theirs, asv_ok))
        pub, _out = _timed(
            [sys.executable, "-m", "jaxbench", "publish", "--html-dir", "html2"], root
        )
        rows.append(("jaxbench publish (asv publish + scan, cache cold)", pub, True))

        for _label, extra in FITS:
            _timed([*ours, *extra], root)  # fill the cache
        # one more commit's results (the history's next commit), as CI adds on a push
        write_results(root / "results", commits, opts.benchmarks, only_last=True)
        for label, extra in FITS:
            t, out = _timed([*ours, *extra], root)
            ref_t, ref = _timed([*ours, *extra, "--no-cache"], root)
            rows.append(
                (
                    f"jaxbench regressions{label}, one commit added, cached "
                    f"({t / ref_t:.0%} of cold {ref_t:.2f} s; same answer: {out == ref})",
                    t,
                    _found(out) == planted,
                )
            )
        pub2, _out = _timed(
            [sys.executable, "-m", "jaxbench", "publish", "--html-dir", "html2"], root
        )
        theirs2, _out = _timed(
            [sys.executable, "-m", "asv", "publish", "--config", "asv.conf.json"], root
        )
        rows.append(("asv publish, one commit added", theirs2, True))
        rows.append(("jaxbench publish, one commit added, cached", pub2, True))
        for label, t, ok in rows:
            print(f"{t:7.2f} s  {label}  only the planted step: {ok}")
        for label, _extra in FITS:
            ratio = theirs / cold[label]
            print(f"ratio asv publish / jaxbench regressions{label} cold: {ratio:.2f}x")
        print(
            f"jaxbench publish added time over asv publish: {pub - theirs:+.2f} s (cold cache), "
            f"{pub2 - theirs2:+.2f} s (one commit added)"
        )


if __name__ == "__main__":
    main()
