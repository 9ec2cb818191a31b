"""Whole pull-request reviews, as ``.github/workflows/pr-bench.yml`` runs them: false alarms
and planted regressions, counted per review.

A scratch git repository of this project (``src/``, ``benchmarks/``,
``pyproject.toml``, ``asv.conf.json`` cut to one environment: jax 0.10.2,
4 logical CPU devices) gets a base commit; each review adds a head commit
on top of it and runs the workflow's steps on (base, head):

1. ``asv run`` of both commits in interleaved rounds (``--rounds``), of every
   benchmark but the warm times (``time_*``), which ab times side by side;
2. both commits installed side by side in two virtualenvs that see the asv
   environment's packages (jax, optax, equinox, asv_runner) through a ``.pth``
   file, each with its commit built and installed without dependencies, as
   the workflow does;
3. ``jaxbench ab`` (``--ab-rounds`` x ``--ab-per-round``, then
   ``--ab-second-look`` more rounds for the warm times whose first look is
   suggestive);
4. ``jaxbench first-call`` (``--first-call-rounds``);
5. ``jaxbench compare --paired`` with the default ``--fail-on``: its exit
   status is the check.

Heads:

* ``aa``: the README changes, the library code is identical (an A/A review);
* ``warm``: predict does real extra work (three more tanh passes over its
  output, kept by XLA in the same loop fusion): +7 to +9 % warm time, measured
  with ``jaxbench ab`` (12 x 100) at the review's shapes, both processes
  pinned to one CPU as ab runs them. (One pass, the earlier plant, measured
  only +1.4 to +2.6 % there, at or under the 2 % paired gate: pinned to one
  CPU, predict's warm time is mostly jax's dispatch, 75 to 150 us, so one pass
  over 1,024 values is small beside it, though +14 to +17 % unpinned in-process);
* ``compile``: predict carries a larger unrolled graph (16 chained tanh
  steps over its output, each multiplied by 0 and added): more to trace,
  lower and compile;
* ``correctness``: predict's answer drifts 1 % (past its tolerance).
* ``memory``: predict keeps 32 MiB of host memory alive from each trace on
  (a cache that grows: ``np.ones`` of 8 Mi float32 appended to a module list),
  so the workload's peak RSS grows by 32 MiB or more; the compiled program and
  its warm time are unchanged. It must fail on a memory row.
* ``memory25``: the same with 4 MiB a trace, a quarter of what predict's
  preparation adds to a fresh process in the review's environment (15.0 to
  15.4 MiB, ``track_workload_peak_rss_bytes`` of ``Predict``, since the
  measuring process hands its inherited free heap back first; 11.0 to 12.6
  MiB and a 3 MiB plant before): the figure grows by about a quarter, far
  below any one-value floor (24 MiB), so only the fresh-process pairs of
  ``jaxbench first-call`` can catch it in a review (the history, with several
  commits a side, by its step test). It must fail on a memory row.

Prints one line per review (exit status, wall time of each step, flagged
rows by kind) and, at the end, the table for the README: A/A reviews that
failed the check, per-row false-alarm rates by kind, and which planted heads
were caught. The goal the issue sets is >= 20 A/A (<= 1 failing) and >= 10
planted (all caught); on a shared 2-core machine run fewer with reduced
rounds (``--aa 3 --planted warm,compile,correctness``) and say so.

Usage::

    .venv/bin/python bench/bench_review.py --aa 0 --planted warm,compile,correctness \\
        --ab-rounds 6 --ab-second-look 6 --ab-per-round 100 -b Predict --first-call-rounds 6
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
MACHINE = "bench-review"
JAX = "0.10.2"
XLA_FLAGS = "--xla_force_host_platform_device_count=4"
ASV = str(Path(sys.executable).parent / "asv")
JAXBENCH = [sys.executable, "-m", "jaxbench"]

PREDICT = "def predict(x: Any, w: Any) -> Any:\n    return jnp.tanh(x @ w)\n"
PLANTS = {
    "warm": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    y = jnp.tanh(x @ w)\n"
        "    z = y\n"
        "    for _ in range(3):  # planted: real extra work, three tanh passes kept by XLA\n"
        "        z = jnp.tanh(z * 0.5)\n"
        "    return y + 0.0 * z\n"
    ),
    "compile": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    y = jnp.tanh(x @ w)\n"
        "    z = y\n"
        "    for i in range(16):  # planted: a larger unrolled graph\n"
        "        z = jnp.tanh(z + 0.01 * i)\n"
        "    return y + 0.0 * z\n"
    ),
    "correctness": (
        "def predict(x: Any, w: Any) -> Any:\n"
        "    return jnp.tanh(x @ w) * 1.01  # planted: 1 % off, past the tolerance\n"
    ),
    "memory": (
        "_KEPT: list[Any] = []  # planted: a host cache that keeps what each trace adds\n"
        "\n"
        "\n"
        "def predict(x: Any, w: Any) -> Any:\n"
        "    _KEPT.append(np.ones((8 * 1024 * 1024,), np.float32))  # planted: 32 MiB a trace\n"
        "    return jnp.tanh(x @ w)\n"
    ),
    "memory25": (
        "_KEPT: list[Any] = []  # planted: a host cache that keeps what each trace adds\n"
        "\n"
        "\n"
        "def predict(x: Any, w: Any) -> Any:\n"
        "    _KEPT.append(np.ones((1024 * 1024,), np.float32))  # planted: 4 MiB a trace\n"
        "    return jnp.tanh(x @ w)\n"
    ),
}
_ENV_NAMES = """
import json
import os
from asv.config import Config
from asv.environment import get_environments

conf = Config.load("asv.conf.json")
envs = get_environments(conf, None, verbose=False)
print(json.dumps([[e.name, os.path.join(conf.env_dir, e.dir_name, "bin", "python")] for e in envs]))
"""

#: The kind of row each planted head must make fail.
EXPECTED = {
    "warm": "time",
    "compile": "compile",
    "correctness": "accuracy",
    "memory": "memory",
    "memory25": "memory",
}


def sh(
    args: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
    stderr: bool = False,
) -> str:
    """The command's stdout (its stderr with ``stderr``); exits on an unexpected status."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done.stderr if stderr else done.stdout


def git(root: Path, *args: str) -> str:
    return sh(["git", *args], root).strip()


def asv_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"JAXBENCH_MACHINE": MACHINE, "PYTHONUNBUFFERED": "1"})
    env.pop("JAXBENCH_RESULTS_DIR", None)
    return env


def make_repo(root: Path) -> str:
    """The scratch repository; returns the base commit."""
    sys.path.insert(0, str(PROJECT / "src"))
    from jaxbench.store.jsonc import loads  # asv.conf.json has comments

    root.mkdir(parents=True)
    for name in ("src", "benchmarks"):
        shutil.copytree(
            PROJECT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
        )
    shutil.copy2(PROJECT / "pyproject.toml", root / "pyproject.toml")
    conf = loads((PROJECT / "asv.conf.json").read_text(encoding="utf-8"))
    # One environment: jax JAX, the suite's other requirements (optax, equinox) as pinned.
    reqs = {name: list(versions)[-1:] for name, versions in conf["matrix"]["req"].items()}
    conf["matrix"] = {"req": {**reqs, "jax": [JAX]}, "env": {"XLA_FLAGS": [XLA_FLAGS]}}
    conf["branches"] = ["main"]
    (root / "asv.conf.json").write_text(json.dumps(conf, indent=2), encoding="utf-8")
    (root / "README.md").write_text("# scratch copy for bench_review.py\n", encoding="utf-8")
    (root / ".gitignore").write_text("/results/\n/.asv/\n/html/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base")
    return git(root, "rev-parse", "HEAD")


def make_head(root: Path, base: str, kind: str, index: int) -> str:
    git(root, "checkout", "-q", "--detach", base)
    if kind == "aa":
        with (root / "README.md").open("a", encoding="utf-8") as readme:
            readme.write(f"\nA/A review {index}: no library change.\n")
    else:
        path = root / "src" / "jaxbench" / "measure" / "workloads.py"
        text = path.read_text(encoding="utf-8")
        assert PREDICT in text, "predict changed: update PREDICT in bench_review.py"
        path.write_text(text.replace(PREDICT, PLANTS[kind]), encoding="utf-8")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-am", f"{kind} {index}")
    return git(root, "rev-parse", "HEAD")


_PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def side_env(root: Path, side: str, asv_python: Path) -> Path:
    """A virtualenv for one side that sees the asv environment's packages (jax,
    optax, equinox, asv_runner: a ``.pth`` file naming its site-packages), as
    the workflow makes it; the side's own commit, installed into it, comes first."""
    env = root.parent / f"{side}-env"
    if not env.exists():
        sh([sys.executable, "-m", "venv", str(env)], root)
        python = env / "bin" / "python"
        shared = sh([str(asv_python), "-c", _PURELIB], root).strip()
        own = Path(sh([str(python), "-c", _PURELIB], root).strip())
        (own / "asv-env.pth").write_text(shared + "\n", encoding="utf-8")
    return env / "bin" / "python"


def install(root: Path, python: Path, commit: str, side: str) -> None:
    """The commit built and installed into the side's virtualenv, without dependencies
    (pip leaves the asv environment's own copy alone: it is outside the virtualenv)."""
    src = root.parent / f"{side}-src"
    if src.exists():
        git(root, "worktree", "remove", "--force", str(src))
    git(root, "worktree", "add", "-q", "--detach", str(src), commit)
    sh(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(src)],
        root,
    )


@dataclass
class Review:
    kind: str
    status: int
    steps: dict[str, float]
    flagged: Counter[str] = field(default_factory=Counter)
    tested: Counter[str] = field(default_factory=Counter)
    summary: str = ""


def review(
    root: Path,
    base: str,
    head: str,
    kind: str,
    args: argparse.Namespace,
    env_name: str,
    asv_python: Path,
) -> Review:
    steps: dict[str, float] = {}
    env = asv_env()
    results = root / "results" / MACHINE
    for old in results.glob("*-*.json"):  # each review measures afresh
        old.unlink()
    hashes = root / ".asv" / "hashes.txt"
    hashes.write_text(f"{base}\n{head}\n", encoding="utf-8")
    bench = ["-b", args.bench] if args.bench else []
    # Warm times are timed by ab, which replaces what asv would record; the
    # figures (track_*, peakmem_*) are asv's. One regex: asv ORs its -b options.
    only = f"(?=.*(?:{args.bench}))" if args.bench else ""
    clock = time.perf_counter()
    sh(
        [
            ASV,
            "run",
            f"HASHFILE:{hashes}",
            "-E",
            env_name,
            "--machine",
            MACHINE,
            "--interleave-rounds",
            "--record-samples",
            "-a",
            f"rounds={args.rounds}",
            "-b",
            rf"^(?!.*\.time_){only}",
        ],
        root,
        env=env,
        ok=(0, 2),
    )
    steps["asv run"] = time.perf_counter() - clock
    print(f"  asv run: {steps['asv run']:.0f} s", flush=True)

    clock = time.perf_counter()
    pythons = {side: side_env(root, side, asv_python) for side in ("base", "head")}
    install(root, pythons["base"], base, "base")
    install(root, pythons["head"], head, "head")
    steps["install"] = time.perf_counter() - clock
    print(f"  install: {steps['install']:.0f} s", flush=True)

    run_env = {**env, "XLA_FLAGS": XLA_FLAGS}
    sides = [
        "--base-commit",
        base,
        "--head-commit",
        head,
        "--base-python",
        str(pythons["base"]),
        "--head-python",
        str(pythons["head"]),
        "--benchmarks",
        "benchmarks",
        "--machine",
        MACHINE,
        "--env",
        env_name,
    ]
    clock = time.perf_counter()
    said = sh(
        [
            *JAXBENCH,
            "ab",
            *sides,
            "--rounds",
            str(args.ab_rounds),
            "--second-look",
            str(args.ab_second_look),
            "--per-round",
            str(args.ab_per_round),
            *bench,
        ],
        root,
        env=run_env,
        stderr=True,
    )
    steps["ab"] = time.perf_counter() - clock
    looked = [line for line in said.splitlines() if "second look (" in line]
    second = f"; {looked[0].split(': ', 1)[1]}" if looked else ""
    print(f"  ab: {steps['ab']:.0f} s{second}", flush=True)
    clock = time.perf_counter()
    sh(
        [*JAXBENCH, "first-call", *sides, "--rounds", str(args.first_call_rounds)],
        root,
        env=run_env,
    )
    steps["first-call"] = time.perf_counter() - clock
    print(f"  first-call: {steps['first-call']:.0f} s", flush=True)

    done = subprocess.run(
        [
            *JAXBENCH,
            "compare",
            base,
            head,
            "--machine",
            MACHINE,
            "--env",
            env_name,
            "--paired",
            str(args.ab_per_round),
            "--format",
            "json",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"compare exited {done.returncode}: {done.stderr}")
    doc: dict[str, Any] = json.loads(done.stdout)
    out = Review(kind, done.returncode, steps, summary=doc["summary"])
    for row in doc["rows"]:
        if row["p_value"] is not None:
            out.tested[row["kind"]] += 1
        if row["category"] is not None:
            out.flagged[row["category"]] += 1
    if args.keep:
        (args.keep / f"{kind}-{head[:8]}.json").write_text(done.stdout, encoding="utf-8")
    return out


def caught(found: Review) -> bool:
    """A planted head fails the check with a row of its own kind flagged."""
    return found.status == 1 and found.flagged[EXPECTED[found.kind]] > 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--aa", type=int, default=20, help="A/A reviews (default: 20)")
    parser.add_argument(
        "--planted",
        default="warm,compile,correctness",
        help="planted heads, comma-separated; each once",
    )
    parser.add_argument(
        "--repeat-planted", type=int, default=1, help="reviews of each planted head"
    )
    parser.add_argument("--rounds", type=int, default=1, help="asv run rounds (workflow: 1)")
    parser.add_argument("--ab-rounds", type=int, default=6, help="jaxbench ab rounds (workflow: 6)")
    parser.add_argument(
        "--ab-second-look",
        type=int,
        default=6,
        help="jaxbench ab's further rounds where suggestive (workflow: 6)",
    )
    parser.add_argument(
        "--ab-per-round", type=int, default=100, help="jaxbench ab samples a round (workflow: 100)"
    )
    parser.add_argument(
        "--first-call-rounds",
        type=int,
        default=10,
        help="jaxbench first-call rounds (workflow: 10)",
    )
    parser.add_argument(
        "-b", "--bench", help="only benchmarks matching (asv run -b, jaxbench ab -b)"
    )
    parser.add_argument("--keep", type=Path, help="write each review's compare JSON here")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    planted = [k for k in args.planted.split(",") if k] * args.repeat_planted
    for kind in planted:
        if kind not in PLANTS:
            raise SystemExit(f"--planted: unknown head {kind!r}; choose from {', '.join(PLANTS)}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-review-"))
    root = work / "repo"
    if root.exists():
        raise SystemExit(f"--workdir: {root} exists (an earlier run's); give a new folder")
    clock = time.perf_counter()
    base = make_repo(root)
    (root / ".asv").mkdir(exist_ok=True)
    sh([ASV, "machine", "--yes", "--machine", MACHINE], root, env=asv_env())
    env_name, python = json.loads(sh([sys.executable, "-c", _ENV_NAMES], root))[0]
    asv_python = root / python
    print(
        f"setup (scratch repo, asv environment): {time.perf_counter() - clock:.0f} s; "
        f"env {env_name}",
        flush=True,
    )
    print(
        f"settings: asv rounds {args.rounds}, ab {args.ab_rounds} (+{args.ab_second_look}) "
        f"x {args.ab_per_round}, "
        f"first-call {args.first_call_rounds}, bench {args.bench or 'all'}",
        flush=True,
    )

    reviews: list[Review] = []
    for index, kind in enumerate(["aa"] * args.aa + planted):
        head = make_head(root, base, kind, index)
        clock = time.perf_counter()
        found = review(root, base, head, kind, args, env_name, asv_python)
        total = time.perf_counter() - clock
        reviews.append(found)
        steps = ", ".join(f"{k} {v:.0f} s" for k, v in found.steps.items())
        flagged = ", ".join(f"{n} {k}" for k, n in sorted(found.flagged.items())) or "none"
        verdict = ""
        if kind != "aa":
            verdict = f"{'caught' if caught(found) else 'NOT caught'} by {EXPECTED[kind]}, "
        print(
            f"review {index + 1} ({kind}): exit {found.status}, {verdict}flagged {flagged}; "
            f"{total:.0f} s ({steps}); {found.summary}",
            flush=True,
        )

    aa = [r for r in reviews if r.kind == "aa"]
    if aa:
        failing = sum(r.status != 0 for r in aa)
        print(f"\nA/A reviews failing the check: {failing} of {len(aa)}")
        print("| kind | tested rows per review | rows flagged in all A/A reviews | per-row rate |")
        print("|---|---|---|---|")
        # memory: the workload-memory rows first-call measures are tested; the
        # process peak (peakmem_*) is one value a side, and counted with them
        for tested_kind in ("time", "compile", "memory"):
            tested = sum(r.tested[tested_kind] for r in aa)
            n_flagged = sum(r.flagged[tested_kind] for r in aa)
            rate = n_flagged / tested if tested else 0.0
            print(f"| {tested_kind} | {tested // len(aa)} | {n_flagged} | {rate:.2%} |")
        for kind in ("accuracy", "work", "failed"):
            print(f"| {kind} (exact or untested) | - | {sum(r.flagged[kind] for r in aa)} | - |")
    plants = [r for r in reviews if r.kind != "aa"]
    if plants:
        print("\n| planted head | caught (exit 1, its kind flagged) | flagged rows |")
        print("|---|---|---|")
        for r in plants:
            flagged = ", ".join(f"{n} {k}" for k, n in sorted(r.flagged.items())) or "none"
            print(f"| {r.kind} | {'yes' if caught(r) else 'NO'} | {flagged} |")
    missed = [r.kind for r in plants if not caught(r)]
    if missed:
        # A planted head must fail the check on its own kind of row, not on another.
        raise SystemExit(f"planted heads not caught by their own kind: {', '.join(missed)}")


if __name__ == "__main__":
    main()
