"""How faithful is the asv suite's warm time? One run, three ways, side by side.

For the lesson's predict (64 x 32 @ 32 x 16, tanh) it measures the warm
median

1. with a bare synchronized ``perf_counter`` loop (fresh processes, each
   call followed by ``jax.block_until_ready``; median of single calls);
2. with this project's asv suite (``benchmarks/workloads.py``,
   ``Predict.time_warm``, made by ``jaxbench.measure.asvsuite.jax_suite``);
3. with a plain asv benchmark written without the helper (setup places,
   jits and warms up; ``time_predict`` calls and blocks),

interleaved over ``--trials`` trials, and prints each one's ratio to the bare
loop. Both asv runs use ``asv run --python=same`` in this environment, with
the same rounds. Then it times one commit's full suite in this existing
environment (``--python=same``).

Then the same side by side (``--side-by-side-rounds``, default 12): with
``jaxbench.lockstep.coordinator`` (what ``jaxbench ab`` uses) the bare loop
(``bench/bare_worker.py``) and the suite's benchmark (timed by asv_runner's
own timer in the real worker) run in two processes pinned to one CPU and are
sampled in turn, 100 samples of 50 calls a side per round; the suite against
the lesson's bare loop (``jax.block_until_ready``) and against a bare loop
ending in the array's own ``block_until_ready()`` (the suite's wait for one
array: this ratio is the harness's own overhead); the plain benchmark
against the lesson's loop. The ratio is the paired estimate (median over
rounds of the median log ratio): what the timing method adds, with the
drift of a shared machine taken out. ``--trials 0`` runs only this part.

Then (``--programs-rounds``, default 6; 0 skips it) the same side by side
for each real program of ``benchmarks/programs.py``: its ``time_warm``
against a bare synchronized loop of the same call (``bench/bare_worker.py``
with ``BARE_WORKLOAD``: ``jax.jit`` with the workload's static and donated
arguments, the training step's state threaded the same way, each call
ending in ``jax.block_until_ready``). ``--only-programs`` runs only that;
``--program NAME`` only the programs whose benchmark name contains NAME.
Diagnostics (``--harness``): in place of the suite, ``harness`` is
jaxbench's own call path without asv (``protocol.prepare``, then
``block(call())``), ``harnessbare`` jaxbench's ``prepare`` followed by the
bare loop's own threading: suite / harness / harnessbare tell asv's layers,
the harness's call path and the process's state apart.

Run: ``.venv/bin/python bench/bench_fidelity.py [--trials 3]``.
Absolute times depend on the machine; the ratios are the result.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from asv_existing import ROOT, write_conf

BARE = r"""
import statistics, sys, time
import jax, jax.numpy as jnp, numpy as np
rng = np.random.default_rng(4)
x = jax.device_put(rng.normal(size=(64, 32)).astype(np.float32))
w = jax.device_put(rng.normal(size=(32, 16)).astype(np.float32))
jax.block_until_ready((x, w))
f = jax.jit(lambda x, w: jnp.tanh(x @ w))
for _ in range(200):
    jax.block_until_ready(f(x, w))
samples = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    jax.block_until_ready(f(x, w))
    samples.append(time.perf_counter() - start)
batches = []
for _ in range(int(sys.argv[1]) // 50):
    start = time.perf_counter()
    for _ in range(50):
        jax.block_until_ready(f(x, w))
    batches.append((time.perf_counter() - start) / 50)
print(statistics.median(samples), statistics.median(batches))
"""

PLAIN = """
import jax
import jax.numpy as jnp
import numpy as np


class PlainPredict:
    rounds = {rounds}

    def setup(self):
        rng = np.random.default_rng(4)
        self.x = jax.device_put(rng.normal(size=(64, 32)).astype(np.float32))
        self.w = jax.device_put(rng.normal(size=(32, 16)).astype(np.float32))
        jax.block_until_ready((self.x, self.w))
        self.f = jax.jit(lambda x, w: jnp.tanh(x @ w))
        jax.block_until_ready(self.f(self.x, self.w))

    def time_predict(self):
        jax.block_until_ready(self.f(self.x, self.w))
"""


def bare(processes: int, calls: int) -> tuple[float, float]:
    """Median over processes of (per-call median, median of 50-call batch means)."""
    runs = [
        subprocess.check_output([sys.executable, "-c", BARE, str(calls)], text=True).split()
        for _ in range(processes)
    ]
    single = statistics.median(float(run[0]) for run in runs)
    batch = statistics.median(float(run[1]) for run in runs)
    return single, batch


def asv_conf(tmp: Path, bench_dir: Path) -> Path:
    return write_conf(
        tmp / "asv.conf.json",
        benchmark_dir=bench_dir,
        results_dir=tmp / "results",
        html_dir=tmp / "html",
    )


def asv_value(conf: Path, bench: str, machine: str) -> tuple[float, float]:
    """Run one benchmark with asv in this environment; (value, wall seconds)."""
    head = subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "HEAD"], text=True).strip()
    results = conf.parent / "results"
    shutil.rmtree(results, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "asv",
            "run",
            "--config",
            str(conf),
            "--python=same",
            "--set-commit-hash",
            head,
            "--machine",
            machine,
            "-b",
            bench,
            "--record-samples",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    values: list[float] = []
    for path in (results / machine).glob("*.json"):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        for row in data["results"].values():
            if row[0] is None:
                continue
            # Parametrized (Predict: rows 64, 96): take the lesson's 64 rows only.
            combos = list(itertools.product(*row[1])) if row[1] else [()]
            values.extend(
                v
                for v, combo in zip(row[0], combos, strict=True)
                if v is not None and combo in ((), ("64",))
            )
    if not values:
        raise SystemExit(f"asv recorded no value for {bench}")
    return statistics.median(values), wall


def side_by_side(plain_dir: Path, rounds: int) -> None:
    """Bare loop against the suite, and against the plain benchmark, in lockstep."""
    import math

    from jaxbench.analyse.stats import paired_round_estimates
    from jaxbench.lockstep.coordinator import Side, run_lockstep

    per_round = 100
    worker = ROOT / "bench" / "bare_worker.py"
    bare_jax = Side("bare", sys.executable, plain_dir.parent / "bare-jax", worker=worker)
    bare_method = Side("bare", sys.executable, plain_dir.parent / "bare-method", worker=worker)
    suite = Side("suite", sys.executable, ROOT / "benchmarks")
    predict = "workloads.Predict.time_warm"
    others = (
        ("suite / bare (jax.block_until_ready)", bare_jax, suite, predict, 0),
        ("suite / bare (array.block_until_ready)", bare_method, suite, predict, 0),
        ("plain asv / bare (jax.block_until_ready)", bare_jax,
         Side("plain", sys.executable, plain_dir), "plain.PlainPredict.time_predict", None),
    )  # fmt: skip
    print(f"side by side, {rounds} rounds x {per_round} samples a side, pinned:", flush=True)
    for label, bare_side, side, name, idx in others:
        start = time.perf_counter()
        bare, other = run_lockstep(bare_side, side, name, idx, rounds=rounds, per_round=per_round)
        if not (bare.samples and other.samples):
            raise SystemExit(f"{label}: {other.failure or other.skip or bare.failure}")
        estimates = paired_round_estimates(bare.samples, other.samples, per_round)
        assert estimates is not None
        ratio = math.exp(statistics.median(estimates))
        print(
            f"  {label:41s}: {statistics.median(other.samples) * 1e6:6.1f} us vs "
            f"{statistics.median(bare.samples) * 1e6:6.1f} us; paired ratio {ratio:.3f} "
            f"(rounds {min(estimates):+.3f}..{max(estimates):+.3f} log); "
            f"{time.perf_counter() - start:.0f} s",
            flush=True,
        )


#: benchmarks/programs.py: (suite benchmark, factory the bare loop builds).
PROGRAMS = (
    ("programs.TrainStep.time_warm", "programs:train_step_workload"),
    ("programs.EqxForward.time_warm", "programs:eqx_forward_workload"),
    ("programs.ScanRnn.time_warm", "programs:scan_rnn_workload"),
    ("programs.Noise.time_warm", "programs:noise_workload"),
)


def programs_side_by_side(
    tmp: Path, rounds: int, per_round: int = 50, only: str = "", harness: str = ""
) -> None:
    """Each real program's time_warm against a bare loop of the same call, in lockstep.

    ``only``: the programs whose benchmark name contains it. ``harness``: in
    place of the suite, a diagnostic (``bench/bare_worker.py``): ``harness``,
    jaxbench's own call path without asv; ``harnessbare``, jaxbench's
    ``prepare`` followed by the bare loop's threading.
    """
    import math

    from jaxbench.analyse.stats import paired_round_estimates
    from jaxbench.lockstep.coordinator import Side, run_lockstep

    worker = ROOT / "bench" / "bare_worker.py"
    suite = Side("suite", sys.executable, ROOT / "benchmarks")
    print(
        f"real programs side by side, {rounds} rounds x {per_round} samples of 50 calls a side,"
        " pinned:",
        flush=True,
    )
    print("| benchmark | suite time_warm | bare loop | paired ratio suite / bare | rounds (log) |")
    print("|---|---|---|---|---|")
    for name, factory in PROGRAMS:
        if only not in name:
            continue
        os.environ["BARE_WORKLOAD"] = factory
        os.environ["BARE_BENCHMARKS"] = str(ROOT / "benchmarks")
        bare_side = Side("bare", sys.executable, tmp / "bare-jax", worker=worker)
        other_side = suite
        if harness:
            other_side = Side(harness, sys.executable, tmp / f"bare-{harness}", worker=worker)
        bare, other = run_lockstep(
            bare_side, other_side, name, 0, rounds=rounds, per_round=per_round
        )
        if not (bare.samples and other.samples):
            raise SystemExit(f"{name}: {other.failure or other.skip or bare.failure}")
        estimates = paired_round_estimates(bare.samples, other.samples, per_round)
        assert estimates is not None
        ratio = math.exp(statistics.median(estimates))
        print(
            f"| `{name}` | {statistics.median(other.samples) * 1e6:.1f} µs | "
            f"{statistics.median(bare.samples) * 1e6:.1f} µs | **{ratio:.3f}** | "
            f"{min(estimates):+.3f}..{max(estimates):+.3f} |",
            flush=True,
        )
    os.environ.pop("BARE_WORKLOAD", None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3000, help="calls per bare process")
    parser.add_argument("--side-by-side-rounds", type=int, default=12)
    parser.add_argument("--programs-rounds", type=int, default=6)
    parser.add_argument(
        "--only-programs", action="store_true", help="only the real programs, side by side"
    )
    parser.add_argument(
        "--program", default="", help="only the programs whose benchmark name contains this"
    )
    parser.add_argument(
        "--harness",
        choices=("harness", "harnessbare"),
        default="",
        help="programs, diagnostic: in place of the suite, jaxbench's call path without asv "
        "(harness), or jaxbench's prepare and then the bare loop (harnessbare)",
    )
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "src"))
    from jaxbench.measure.asvsuite import ROUNDS

    env = dict(os.environ, JAXBENCH_MACHINE="fidelity")
    os.environ.update(env)
    machine = "fidelity"
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes", "--machine", machine],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        plain_dir = tmp / "plain"
        plain_dir.mkdir()
        (plain_dir / "__init__.py").write_text("")
        (plain_dir / "plain.py").write_text(PLAIN.format(rounds=ROUNDS))
        suite_conf = asv_conf(tmp / "suite", ROOT / "benchmarks")
        plain_conf = asv_conf(tmp / "plainrun", plain_dir)

        if args.programs_rounds:
            programs_side_by_side(
                tmp, args.programs_rounds, only=args.program, harness=args.harness
            )
        if args.only_programs:
            return 0
        side_by_side(plain_dir, args.side_by_side_rounds)
        if not args.trials:
            return 0
        rows = []
        for trial in range(args.trials):
            b, bb = bare(ROUNDS, args.calls)
            s, _ = asv_value(suite_conf, r"Predict\.time_warm", machine)
            p, _ = asv_value(plain_conf, r"PlainPredict\.time_predict", machine)
            rows.append((b, bb, s, p))
            print(
                f"trial {trial + 1}: bare {b * 1e6:6.1f} us (50-call batches {bb * 1e6:6.1f} us)"
                f"   suite {s * 1e6:6.1f} us   plain asv {p * 1e6:6.1f} us",
                flush=True,
            )
        b, bb, s, p = (statistics.median(col) for col in zip(*rows, strict=True))
        print(f"\nmedian over {args.trials} trials (rounds={ROUNDS} processes each):")
        print(f"  bare loop, median of single calls     : {b * 1e6:6.1f} us  (1.00)")
        print(f"  bare loop, median of 50-call batches  : {bb * 1e6:6.1f} us  ({bb / b:.2f} x)")
        print(
            f"  jaxbench suite (asv, 50-call samples) : {s * 1e6:6.1f} us  ({s / b:.2f} x single, "
            f"{s / bb:.2f} x batches)"
        )
        print(
            f"  plain asv benchmark                   : {p * 1e6:6.1f} us  ({p / b:.2f} x single, "
            f"{p / bb:.2f} x batches)"
        )

        _, wall = asv_value(suite_conf, ".", machine)
        print(f"\none commit's full suite, existing environment: {wall:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
