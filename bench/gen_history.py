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

With ``--commits N`` the commits above scale with N (they are fractions of
900: 200 is 2N/9, 600 is 2N/3 ...).

``--failing`` adds what a real project's history holds after years of failed
builds (issue 41), and the output of ``asv run --show-stderr`` that tells why,
one log per machine (``OUT/asv-run-m-a.log``, ``OUT/asv-run-m-b.log``):

* a retired environment: ``m-a`` / ``py3.10-numpy1`` stops at commit 750
  (5N/6) and its last commit failed to build (every benchmark ``null``; the
  log: ``ERROR: Package 'gen' requires a different Python ...``); the other
  environments go on to commit 900;
* a whole-result failure at the newest commit of a live environment: every
  benchmark of ``m-b`` / ``py3.11-numpy2``'s newest file is ``null``; the log:
  the install failed (``No space left on device``);
* three partial failures on ``m-a`` / ``py3.11-numpy2``, each with its error
  text in the log: ``suite0.B007.peakmem_c`` (10 parameters) fails at the
  newest commit only (out of memory), the ``'y'`` half of
  ``suite5.B005.time_a`` (20 series) since commit N - 41 (an array deleted),
  and ``suite6.B006.time_b`` at every commit (never had a value: a ``jit``
  keyword error);
* no other failure at the newest commit of any environment, nor in the three
  planted benchmarks of ``m-a`` / ``py3.11-numpy2`` (the 0.5 % of random
  ``null`` points stay elsewhere).

Usage: ``python bench/gen_history.py OUT [--commits 900] [--scale 1.0] [--repo] [--failing]``;
``--scale`` multiplies the benchmark count (``--scale 0.1`` for a quick one).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import zlib
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
#: (machine, env) -> (first commit as a fraction of the commits, plus this, every nth commit)
ENVS = {
    ("m-a", "py3.10-numpy1"): (0, 1),
    ("m-a", "py3.11-numpy2"): (0, 2),
    ("m-b", "py3.11-numpy2"): (1, 2),
}
RETIRED = ("m-a", "py3.10-numpy1")
#: the partial failures of --failing on m-a / py3.11-numpy2: benchmark index -> error
PARTIAL = {
    7: "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while "
    "trying to allocate 8589934592 bytes.",
    5: "RuntimeError: Array has been deleted with shape=float32[1024].",
    6: "TypeError: jit() got an unexpected keyword argument 'donate_argnames'",
}
BUILD_ERROR = "ERROR: Package 'gen' requires a different Python: 3.10.14 not in '>=3.11'"
INSTALL_ERROR = (
    "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"
)


class Plan:
    """The commits where things happen, for ``n`` commits (900: the figures of the doc)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.first = n * 2 // 9
        self.code, self.env, self.machine = n * 2 // 3, n * 7 // 9 + 1, n * 5 // 9 + 1
        self.work, self.version = n * 8 // 9, n // 2
        self.retire = n * 5 // 6
        self.deleted_since = n - 41

    def commits(self, machine: str, env: str, failing: bool) -> range:
        """The commits measured on one machine and environment."""
        offset, every = ENVS[(machine, env)]
        end = self.retire if failing and (machine, env) == RETIRED else self.n
        return range(self.first + offset, end, every)


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


def _failing_at(j: int, combo: tuple[str, ...], i: int, newest: bool, plan: Plan) -> str | None:
    """The planted error of benchmark ``j`` at ``combo`` and commit ``i`` (--failing), or None."""
    planted = {7: newest, 6: True, 5: bool(combo) and combo[0] == "'y'" and i >= plan.deleted_since}
    return PARTIAL[j] if planted.get(j) else None


def write(
    out: Path, n_commits: int, scale: float, commits: list[str] | None, failing: bool = False
) -> int:
    """Write the results directory (and with ``failing`` the logs); the number of result files."""
    plan = Plan(n_commits)
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
    logs: dict[str, list[str]] = {}
    for machine, env in ENVS:
        rng = random.Random(f"{machine}{env}")
        measured = plan.commits(machine, env, failing)
        for i in measured:
            newest = i == measured[-1]
            # --failing: the retired environment's last build, m-b's newest install
            whole = failing and newest and (machine, env) in (RETIRED, ("m-b", "py3.11-numpy2"))
            params = {"machine": machine, "python": env[2:6], "arch": "x86_64", "num_cpu": "2"}
            if machine == "m-b":
                params["fingerprint"] = "0a1b2c3d4e5f" if i < plan.machine else "9f8e7d6c5b4a"
            rows: dict[str, list[object]] = {}
            errors: dict[str, dict[tuple[str, ...], str]] = {}
            for j, (name, info) in enumerate(bench.items()):
                combos = list(itertools.product(*info["params"]))  # type: ignore[misc]
                version = "v2" if j % 10 == 0 and i >= plan.version else "v1"
                exact = "track_work" in name
                values: list[float | None] = []
                ci_a: list[float | None] = []
                ci_b: list[float | None] = []
                for c, combo in enumerate(combos):
                    level = base[name] * (1 + 0.05 * c)
                    if exact:
                        level = round(level * 1e9) * (2 if i >= plan.work and j % 25 == 4 else 1)
                    else:
                        if i >= plan.code and j % 15 == 1:
                            level *= 1.3
                        if machine == "m-b" and i >= plan.env and name.endswith(("a", "b")):
                            level *= 1.15
                        if machine == "m-b" and i >= plan.machine:
                            level *= 1.2
                    skipped = env == "py3.11-numpy2" and c == 1 and j % 4 == 2
                    if skipped and not whole:
                        values.append(float("nan"))  # asv: skipped
                        ci_a.append(None)
                        ci_b.append(None)
                        continue
                    error = None
                    planted = (
                        failing and (machine, env) == ("m-a", "py3.11-numpy2") and j in PARTIAL
                    )
                    if planted:
                        error = _failing_at(j, combo, i, newest, plan)
                    fails = not skipped and rng.random() < 0.005
                    fails = fails and not (failing and (newest or planted))
                    if fails or whole or error is not None:
                        values.append(None)  # asv: failed
                        ci_a.append(None)
                        ci_b.append(None)
                        if error is not None:
                            errors.setdefault(name, {})[combo] = error
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
            if failing and newest:
                cause = None
                if whole:
                    cause = BUILD_ERROR if (machine, env) == RETIRED else INSTALL_ERROR
                logs.setdefault(machine, []).extend(
                    asv_log_section(hashes[i], env, bench, errors, cause)
                )
    for machine, lines in logs.items():
        (out / f"asv-run-{machine}.log").write_text("".join(line + "\n" for line in lines))
    return n_files


def asv_log_section(
    commit: str,
    env: str,
    bench: dict[str, dict[str, object]],
    errors: dict[str, dict[tuple[str, ...], str]],
    build_error: str | None,
) -> list[str]:
    """What ``asv run --show-stderr`` prints for one commit and environment (asv 0.6's form,
    as in tests/data/asv-build-failure/asv-run.log): a failed build or install, then every
    benchmark skipped; or every benchmark's result, a failed one with its traceback."""
    env_dir = f"/home/runner/work/gen/gen/.asv/env/{zlib.crc32(env.encode()):08x}"
    lines = [f"[ 0.00%] · For gen commit {commit[:8]} <main>:", f"[ 0.00%] ·· Building for {env}"]
    pad = " " * 13
    if build_error is not None:
        step = "wheel --no-deps -w {0}/asv-build-cache {0}/project"
        if "install" in build_error:
            step = "install {0}/asv-build-cache/gen-0.1-py3-none-any.whl --force-reinstall"
        command = f"{env_dir}/bin/python -m pip " + step.format(env_dir)
        lines += [
            f"[ 0.00%] ··· Error running {command} (exit status 1)",
            f"{pad}STDOUT -------->",
            f"{pad}Processing {env_dir}/project",
            f"{pad}STDERR -------->",
            f"{pad}{build_error}",
            "",
            f"[ 0.00%] ·· Skipping {env}",
        ]
        for k, name in enumerate(bench, 1):
            lines.append(f"[{100 * k / len(bench):5.2f}%] ··· {name} skipped")
        return lines
    lines.append(f"[ 0.00%] ·· Benchmarking {env}")
    for k, name in enumerate(bench, 1):
        at = f"[{100 * k / len(bench):5.2f}%]"
        failed = errors.get(name, {})
        n_combos = len(list(itertools.product(*bench[name]["params"])))  # type: ignore[misc]
        if not failed:
            status = "ok" if n_combos > 1 or bench[name]["params"] else "1.00±0.01ms"
            lines.append(f"{at} ··· {name:<60} {status}")
            continue
        status = "failed" if len(failed) == n_combos else f"{len(failed)}/{n_combos} failed"
        lines.append(f"{at} ··· {name:<60} {status}")
        method = name.rsplit(".", 1)[1]
        for n, (combo, error) in enumerate(failed.items()):
            head = f"{at} ···· " if n == 0 else pad + " "
            if combo:
                lines.append(f"{head}For parameters: {', '.join(combo)}")
                head = pad + " "
            lines += [
                f"{head}Traceback (most recent call last):",
                f'{pad}   File "benchmarks/{name.split(".")[0]}.py", line 42, in {method}',
                f"{pad}     self.run()",
                f"{pad} {error}",
                "",
            ]
        lines.append(f"{pad} asv: benchmark failed (exit status 1)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--commits", type=int, default=900)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repo", action="store_true", help="also a git repository for asv")
    parser.add_argument(
        "--failing",
        action="store_true",
        help="a retired environment, whole-result and partial failures, and asv's logs",
    )
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
    n = write(opts.out, opts.commits, opts.scale, commits, failing=opts.failing)
    logs = " and asv's logs" if opts.failing else ""
    print(f"wrote {n} result files to {opts.out / 'results'}{logs}")


if __name__ == "__main__":
    main()
