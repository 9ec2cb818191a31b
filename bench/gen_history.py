"""A large asv results history, the shape of a real project's, for timing the scan.

Writes ``OUT/results`` (asv format 2, as ``asv run`` writes without
``--record-samples``) and, with ``--repo``, ``OUT/repo`` (a git repository of
the same commits, for ``asv publish``) and ``OUT/asv.conf.json``:

* 900 commits, one a day; two machines, three environments:
  ``m-a`` / ``py3.10-numpy1`` (every commit from 200 on: 700 files),
  ``m-a`` / ``py3.11-numpy2`` (every other commit from 200: 350 files),
  ``m-b`` / ``py3.11-numpy2`` (every other commit from 201: 350 files);
  1,400 result files in all;
* 150 benchmarks (time, peakmem, track, ``track_work_*``): a third without
  parameters, a third with 10 values, a third with 2 x 20; 2,550 parameter
  combinations per file, 8,000+ series once the version changes count;
* benchmark-version changes (every 10th benchmark changes version at commit
  450), failed points (about 0.5 %, asv's ``null``), skipped ones (one
  parameter value is NaN in one environment);
* planted: a code regression at commit 600 (10 benchmarks, every parameter,
  x1.3, all environments); an environment change on ``m-b`` at commit 701
  (every ``time_`` series x1.15: a broad event); a fingerprint change on
  ``m-b`` at commit 501 (every series x1.2: must be "machine changed", never a
  regression); a work figure up at commit 800 (exact).

Usage: ``python bench/gen_history.py OUT [--commits 900] [--scale 1.0] [--repo]``;
``--scale`` multiplies the benchmark count (``--scale 0.1`` for a quick one).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from pathlib import Path

DAY_MS = 86_400_000
T0_MS = 1_600_000_000_000
COLUMNS = [
    "result",
    "params",
    "version",
    "started_at",
    "duration",
    "stats_ci_99_a",
    "stats_ci_99_b",
    "stats_q_25",
    "stats_q_75",
    "stats_number",
    "stats_repeat",
]
ENVS = {
    ("m-a", "py3.10-numpy1"): (200, 1),
    ("m-a", "py3.11-numpy2"): (200, 2),
    ("m-b", "py3.11-numpy2"): (201, 2),
}
CODE_STEP, ENV_STEP, MACHINE_STEP, WORK_STEP, VERSION_STEP = 600, 701, 501, 800, 450


def benchmarks(n: int) -> dict[str, dict[str, object]]:
    """benchmarks.json entries: names, parameters, units, versions."""
    out: dict[str, dict[str, object]] = {}
    prefixes = ("time_a", "time_b", "peakmem_c", "track_d", "track_work_flops")
    for j in range(n):
        method = prefixes[j % len(prefixes)]
        name = f"suite{j % 7}.B{j:03d}.{method}"
        if j % 3 == 0:
            params: list[list[str]] = []
        elif j % 3 == 1:
            params = [[repr(v) for v in range(10)]]
        else:
            params = [["'x'", "'y'"], [repr(2**k) for k in range(20)]]
        unit = "seconds" if method.startswith("time") else "bytes"
        if method.startswith("track"):
            unit = "flops" if "work" in method else "unitless"
        out[name] = {
            "name": name,
            "params": params,
            "param_names": [f"p{i}" for i in range(len(params))],
            "type": method.split("_", 1)[0].replace("peakmem", "peakmemory"),
            "unit": unit,
            "version": "v1",
        }
    return out


def write(out: Path, n_commits: int, scale: float, commits: list[str] | None) -> int:
    """Write the results directory; returns the number of result files."""
    results = out / "results"
    results.mkdir(parents=True, exist_ok=True)
    bench = benchmarks(max(5, round(150 * scale)))
    with (results / "benchmarks.json").open("w") as fh:
        json.dump({**bench, "version": 2}, fh)
    for machine in ("m-a", "m-b"):
        (results / machine).mkdir(exist_ok=True)
        (results / machine / "machine.json").write_text(
            json.dumps({"machine": machine, "arch": "x86_64", "num_cpu": "2", "version": 1})
        )
    hashes = commits or [f"{random.Random(i).getrandbits(160):040x}" for i in range(n_commits)]
    base = {name: random.Random(name).uniform(1e-5, 1e-2) for name in bench}
    n_files = 0
    for (machine, env), (first, every) in ENVS.items():
        rng = random.Random(f"{machine}{env}")
        for i in range(first, n_commits, every):
            params = {"machine": machine, "python": env[2:6], "arch": "x86_64", "num_cpu": "2"}
            if machine == "m-b":
                params["fingerprint"] = "0a1b2c3d4e5f" if i < MACHINE_STEP else "9f8e7d6c5b4a"
            rows: dict[str, list[object]] = {}
            for j, (name, info) in enumerate(bench.items()):
                combos = list(itertools.product(*info["params"]))  # type: ignore[misc]
                version = "v2" if j % 10 == 0 and i >= VERSION_STEP else "v1"
                exact = "track_work" in name
                values: list[float | None] = []
                ci_a: list[float | None] = []
                ci_b: list[float | None] = []
                for c, _combo in enumerate(combos):
                    level = base[name] * (1 + 0.05 * c)
                    if exact:
                        level = round(level * 1e9) * (2 if i >= WORK_STEP and j % 25 == 4 else 1)
                    else:
                        if i >= CODE_STEP and j % 15 == 1:
                            level *= 1.3
                        if machine == "m-b" and i >= ENV_STEP and name.endswith(("a", "b")):
                            level *= 1.15
                        if machine == "m-b" and i >= MACHINE_STEP:
                            level *= 1.2
                    if env == "py3.11-numpy2" and c == 1 and j % 4 == 2:
                        values.append(float("nan"))  # asv: skipped
                        ci_a.append(None)
                        ci_b.append(None)
                        continue
                    if rng.random() < 0.005:
                        values.append(None)  # asv: failed
                        ci_a.append(None)
                        ci_b.append(None)
                        continue
                    value = level if exact else level * (1 + rng.gauss(0, 0.02))
                    values.append(value)
                    ci_a.append(value * 0.96 if not exact else value)
                    ci_b.append(value * 1.04 if not exact else value)
                n = len(values)
                rows[name] = [
                    values,
                    info["params"],
                    version,
                    T0_MS + i * DAY_MS,
                    1.5,
                    ci_a,
                    ci_b,
                    ci_a,
                    ci_b,
                    [1] * n,
                    [10] * n,
                ]
            doc = {
                "commit_hash": hashes[i],
                "env_name": env,
                "date": T0_MS + i * DAY_MS,
                "params": params,
                "python": env[2:6],
                "requirements": {},
                "env_vars": {},
                "result_columns": COLUMNS,
                "results": rows,
                "durations": {},
                "version": 2,
            }
            text = json.dumps(doc, separators=(",", ":")).replace("NaN", "NaN")
            (results / machine / f"{hashes[i][:8]}-{env}.json").write_text(text)
            n_files += 1
    return n_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--commits", type=int, default=900)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repo", action="store_true", help="also a git repository for asv")
    opts = parser.parse_args()
    commits = None
    if opts.repo:
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_detect import make_repo

        made = make_repo(opts.out / "repo", opts.commits)
        commits = [h for h, _date in made]
        conf = {
            "version": 1,
            "project": "gen",
            "project_url": "http://example.com/",
            "repo": "repo",
            "branches": ["main"],
            "dvcs": "git",
            "environment_type": "virtualenv",
            "results_dir": "results",
            "html_dir": "html",
        }
        (opts.out / "asv.conf.json").write_text(json.dumps(conf))
    n = write(opts.out, opts.commits, opts.scale, commits)
    print(f"wrote {n} result files to {opts.out / 'results'}")


if __name__ == "__main__":
    main()
