"""One accelerator check: the corpus, the report, one A/A and one planted ``jaxbench ab`` pair.

Run on the device machine through ``bench/device_check.sh`` (at most 8
minutes); ``--dry-run`` is the same on the CPU with tiny sizes and few rounds
(``tests/test_device_check.py`` runs it). Steps:

1. ``bench/corpus_table.py``: every corpus idiom through ``jaxbench report``
   and asv_runner's figures and timing loop (``JAXBENCH_CORPUS_SCALE`` sizes);
2. ``jaxbench report --workload predict``: the lesson's report on the device;
3. a scratch git repository with a small suite (``Predict``: ``tanh(x @ w)``
   with ``ROWS`` rows) at a base commit and two heads: ``aa`` (a README
   change, the code identical) and ``planted`` (three more passes over the
   output, kept by XLA: more warm time). For each pair: ``asv run
   --python=same --quick`` of both commits (asv's figures and
   ``benchmarks.json``), ``jaxbench ab`` of the warm time side by side, and
   ``jaxbench compare --paired``: the A/A must flag nothing, the planted
   head must be flagged.

Prints one table (step, result, seconds, detail) and exits 0 when every step
did what it should. ``--steps`` runs some of them (``corpus``, ``report``,
``ab``: the test runs the two ``ab`` pairs, which time two sides, with the
machine to itself, and the rest beside other tests).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MACHINE = "device-check"

SUITE = """\
import jax.numpy as jnp
import numpy as np

from jaxbench.measure import Workload, jax_suite

ROWS = {rows}


def predict(x, w):
    y = jnp.tanh(x @ w)
{extra}    return y


def make_workload(rows):
    def inputs(rng):
        x = rng.normal(size=(rows, 256)).astype(np.float32)
        w = (rng.normal(size=(256, 256)) / 16).astype(np.float32)
        return x, w

    return Workload(name="predict", fn=predict, inputs=inputs,
                    reference=lambda x, w: np.tanh(x @ w), atol=1e-3, rtol=1e-3,
                    params={{"rows": rows}})


Predict, PredictFigures = jax_suite("Predict", make_workload, params={{"rows": [ROWS]}})
"""
#: The planted head: three more passes over the output that keep the answer.
PLANT = "    for _ in range(3):\n        y = y + 0.0 * jnp.tanh(y)\n"


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Any:
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _suite_dir(root: Path, rows: int, planted: bool) -> Path:
    bench = root / "benchmarks"
    bench.mkdir(parents=True, exist_ok=True)
    (bench / "__init__.py").write_text("")
    (bench / "suite.py").write_text(SUITE.format(rows=rows, extra=PLANT if planted else ""))
    return bench


def ab_pair(kind: str, work: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    """One pull-request-like review of ``kind`` (``aa`` or ``planted``): its verdict."""
    repo = work / kind / "repo"
    _suite_dir(repo, args.rows, planted=False)
    conf = {
        "version": 1, "project": "device-check", "repo": ".", "branches": ["HEAD"],
        "environment_type": "existing", "benchmark_dir": "benchmarks",
        "results_dir": "results", "html_dir": "html", "launch_method": "spawn",
    }  # fmt: skip
    (repo / "asv.conf.json").write_text(json.dumps(conf))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=check", "-c", "user.email=c@x", "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    base_dir = work / kind / "base"
    _suite_dir(base_dir, args.rows, planted=False)
    head_dir = work / kind / "head"
    _suite_dir(head_dir, args.rows, planted=kind == "planted")
    if kind == "planted":
        _suite_dir(repo, args.rows, planted=True)
    else:
        (repo / "README.md").write_text("an A/A head: the code is identical\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=check", "-c", "user.email=c@x", "commit", "-qm", kind)
    head = _git(repo, "rev-parse", "HEAD")
    asv = [sys.executable, "-m", "asv"]
    _run([*asv, "machine", "--yes", "--machine", MACHINE], repo, env, 120)
    for commit in (base, head):
        _git(repo, "checkout", "-q", commit)
        done = _run([*asv, "run", "--python=same", "--quick", "--set-commit-hash", commit,
                     "--machine", MACHINE, "-b", "track_work_flops|track_tolerance_used"],
                    repo, env, 300)  # fmt: skip
        if done.returncode != 0:
            return {
                "ok": False,
                "detail": f"asv run exited {done.returncode}: {done.stderr[-300:]}",
            }
    (result,) = [p for p in (repo / "results" / MACHINE).glob(f"{base[:8]}-*.json")]
    env_name = result.stem.split("-", 1)[1]
    done = _run([str(BIN / "jaxbench"), "ab", "--base-commit", base, "--head-commit", head,
                 # this interpreter for both sides: the suites are all the code there is
                 "--base-python", sys.executable, "--head-python", sys.executable,
                 "--base-benchmarks", str(base_dir / "benchmarks"),
                 "--head-benchmarks", str(head_dir / "benchmarks"),
                 "-b", "time_warm", "--rounds", str(args.rounds), "--second-look",
                 str(args.rounds), "--per-round", str(args.per_round),
                 "--machine", MACHINE, "--env", env_name, "--results", "results"],
                repo, env, 360)  # fmt: skip
    if done.returncode != 0:
        return {"ok": False, "detail": f"ab exited {done.returncode}: {done.stderr[-300:]}"}
    done = _run([str(BIN / "jaxbench"), "compare", base, head, "--results", "results",
                 "--machine", MACHINE, "--paired", str(args.per_round), "--format", "json"],
                repo, env, 120)  # fmt: skip
    if done.returncode not in (0, 1):
        return {"ok": False, "detail": f"compare exited {done.returncode}: {done.stderr[-300:]}"}
    rows = json.loads(done.stdout)["rows"]
    warm = next(r for r in rows if r["benchmark"].endswith(".time_warm"))
    flagged = done.returncode == 1
    regressed = sorted(r["benchmark"].rsplit(".", 1)[-1] for r in rows
                       if r["verdict"] == "regression")  # fmt: skip
    detail = (f"time_warm {warm['verdict']}, ratio {warm['ratio']:.3f}; "
              f"regressions: {', '.join(regressed) or 'none'}; exit {done.returncode}")  # fmt: skip
    return {"ok": flagged == (kind == "planted"), "detail": detail}


#: The steps, in order: ``--steps`` runs some of them (a test runs the ``ab`` pairs,
#: which time two sides, apart from the rest).
STEPS = ("corpus", "report", "ab")

Row = tuple[str, bool, float, str]


def corpus_step(work: Path, env: dict[str, str], args: argparse.Namespace) -> Row:
    """The corpus through both paths (``bench/corpus_table.py``)."""
    clock = time.perf_counter()
    corpus_json = work / "corpus.json"
    only = ["--only", "eqx_module,optax_step,same_array_twice_donated"] if args.dry_run else []
    done = _run([sys.executable, str(ROOT / "bench" / "corpus_table.py"), "--json",
                 str(corpus_json), *only], ROOT, env, 400)  # fmt: skip
    print(done.stdout, flush=True)
    rows = json.loads(corpus_json.read_text()) if corpus_json.is_file() else []
    passed = sum(1 for r in rows if r["passed"])
    return ("corpus", done.returncode == 0, time.perf_counter() - clock,
            f"{passed} of {len(rows)} idioms passed both paths")  # fmt: skip


def report_step(env: dict[str, str]) -> Row:
    """``jaxbench report`` of predict."""
    clock = time.perf_counter()
    done = _run([str(BIN / "jaxbench"), "report", "--workload", "predict", "--repeats", "5"],
                ROOT, env, 120)  # fmt: skip
    detail = done.stderr.strip()[-200:]
    if done.returncode == 0:
        data = json.loads(done.stdout)
        detail = (f"{data['platform']}: warm {data['warm_median_seconds'] * 1e6:.1f} us, "
                  f"first call {data['first_call_seconds'] * 1e3:.1f} ms, "
                  f"tolerance used {data['tolerance_used']:.3g}")  # fmt: skip
    return ("report", done.returncode == 0, time.perf_counter() - clock, detail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="the CPU, tiny sizes, few rounds")
    parser.add_argument("--json", type=Path, help="also write the table's rows here")
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help=f"the steps to run, comma-separated (default: all of {','.join(STEPS)})",
    )
    args = parser.parse_args()
    steps = [step for step in args.steps.split(",") if step]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown or not steps:
        parser.error(f"--steps: choose from {', '.join(STEPS)}, got {args.steps!r}")
    args.rows = 64 if args.dry_run else 8192
    args.rounds = 2 if args.dry_run else 6
    args.per_round = 10 if args.dry_run else 100
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASV")}
    env["JAXBENCH_CORPUS_SCALE"] = "1" if args.dry_run else "64"
    # ab keeps both sides' processes alive at once: neither may take most of the device
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    if args.dry_run:
        env["JAX_PLATFORMS"] = "cpu"
    table: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="jaxbench-device-check-") as tmp:
        work = Path(tmp)
        env.setdefault("HOME", str(work))
        if "corpus" in steps:
            table.append(corpus_step(work, env, args))
        if "report" in steps:
            table.append(report_step(env))
        for kind in ("aa", "planted") if "ab" in steps else ():
            clock = time.perf_counter()
            try:
                found = ab_pair(kind, work, env, args)
            except (subprocess.SubprocessError, OSError, ValueError, KeyError) as exc:
                found = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
            table.append((f"ab {kind}", found["ok"], time.perf_counter() - clock, found["detail"]))
    width = max(len(step) for step, *_ in table)
    print(f"{'step':{width}}  result  seconds  detail")
    for step, ok, seconds, detail in table:
        print(f"{step:{width}}  {'ok' if ok else 'FAIL':6}  {seconds:7.1f}  {detail}")
    if args.json:
        args.json.write_text(json.dumps([
            {"step": s, "ok": ok, "seconds": sec, "detail": d} for s, ok, sec, d in table
        ], indent=2) + "\n")  # fmt: skip
    return 0 if all(ok for _, ok, _, _ in table) else 1


if __name__ == "__main__":
    sys.exit(main())
