"""Any JAX project, not only ours: each project shape adopts jaxbench end to end.

For each history of ``tests/shapes.py`` (a real git repository of a tiny JAX
library, ``tests/init_repo.py``'s shapes: src or flat layout; setuptools,
setuptools_scm cloned without tags, hatchling, hatch-vcs, flit, pdm, poetry-core; a
merge history; its own benchmark workflows; its own asv.conf.json), as a
user following the README and what ``jaxbench init`` prints:

1. ``jaxbench init`` (it names what it found and left alone);
2. a suite for the library's ``double``, as the README's example, committed;
3. ``make bench-check`` (every benchmark but the warm times, once);
4. ``make bench`` over the newest commits, whose paired history must time
   every item of every pair (the project's own build, whatever asv kept);
5. the written pull-request review's steps on an A/A pull request (an empty
   commit): every step runs, nothing newly failing, no exact figure changed
   (timed figures go to the table: the tier's two processes share the machine);
6. a benchmark whose answer is wrong, added and measured at HEAD: ``make
   bench`` names it, with its error, among the failing benchmarks.

A library that keeps its own asv set-up in a subfolder (``asv_bench/``, ``"repo":
".."``) with plain asv ``time_*`` benchmarks, never running init, is reviewed
with ``jaxbench review --config asv_bench/asv.conf.json``
(:func:`test_a_library_s_own_asv_set_up_in_a_subfolder_is_reviewed`).

The shapes share one asv environment per test process (their matrices are
alike: ``.asv/env`` is a link to it, as a user with a shared cache would
have), so jax is installed once. Marked ``shapes``: ``make test-shapes`` runs
them, and ``.ci/run`` runs that tier after ``make test``. Each test writes
its row of ``bench/bench_shapes.py``'s table to ``$JAXBENCH_SHAPES_TABLE``
when that is set.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from e2e_repo import MACHINE, git
from init_repo import write_files
from jaxbench.store.paired import load_paired
from shapes import BROKEN_SUITE, HISTORIES, History, double_suite, make_history
from test_e2e_init import jaxbench, make, run_review_steps

pytestmark = [pytest.mark.shapes, pytest.mark.e2e]

JAX = "0.10.2"
REPO = Path(__file__).resolve().parents[1]
#: short pairs: the tier's budget (what is checked is that every item of every
#: pair is timed, not how finely)
PAIR_ARGS = "PAIR_ARGS=--rounds 3 --second-look 0 --per-round 10"
TIMEOUT = 1800
#: The kinds a review times (the rest are exact: XLA's work, the answer).
TIMED = frozenset({"time", "compile", "memory"})


@dataclass(frozen=True)
class Row:
    """One shape's line of bench/bench_shapes.py's table."""

    shape: str
    init: str
    bench_check: str
    make_bench_seconds: float
    pairs_timed: int
    pairs: int
    review: str
    failing_named: str


@pytest.fixture(scope="session")
def shared_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One asv env_dir for every shape of this process."""
    return tmp_path_factory.mktemp("shared-asv-env")


@pytest.fixture(scope="session")
def jaxbench_wheel(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``--jaxbench`` for init: one wheel of this checkout for every test process.

    Without it each shape's environment builds jaxbench from this checkout
    (init's ``jaxbench @ file://`` requirement), and pip builds a local
    directory in place: two builds at once (one per test process) share its
    ``build/`` folder, and one of them installs a jaxbench without its
    modules (``No module named 'jaxbench'``, pip exiting 0). A user installs
    jaxbench from an index or git, each build in a folder of its own.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if worker else base
    wheels = shared / "jaxbench-wheel"
    with open(shared / "jaxbench-wheel.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = sorted(wheels.glob("jaxbench-*.whl"))
        if not built:
            source = shared / "jaxbench-source"
            shutil.rmtree(source, ignore_errors=True)
            source.mkdir()
            for name in ("pyproject.toml", "README.md", "LICENSE"):
                if (REPO / name).exists():
                    shutil.copy2(REPO / name, source / name)
            shutil.copytree(
                REPO / "src",
                source / "src",
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "wheel",
                    "-q",
                    "--no-deps",
                    "-w",
                    str(wheels),
                    str(source),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            built = sorted(wheels.glob("jaxbench-*.whl"))
    assert len(built) == 1, built
    return f"jaxbench @ {built[0].as_uri()}"


def _record(row: Row) -> None:
    table = os.environ.get("JAXBENCH_SHAPES_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(row)) + "\n")


def _tail(done: object) -> str:
    out = str(getattr(done, "stdout", "")) + str(getattr(done, "stderr", ""))
    return out[-6000:]


def _adopt(history: History, root: Path, wheel: str) -> str:
    """init, as the user runs it (again with --force where init says so); what it printed."""
    done = jaxbench(root, "init", "--jax", JAX, "--jaxbench", wheel)
    said = done.stdout + done.stderr
    if history.shape == "asv-conf":  # init names the project's own asv set-up and stops
        assert done.returncode == 2, said
        assert "asv.conf.json" in said, said
        assert "--force" in said, said
        done = jaxbench(root, "init", "--jax", JAX, "--jaxbench", wheel, "--force")
        said += done.stdout + done.stderr
    assert done.returncode == 0, said[-6000:]
    return said


@pytest.mark.parametrize("history", HISTORIES, ids=[h.name for h in HISTORIES])
def test_a_project_shape_adopts_jaxbench_end_to_end(
    history: History, shared_env: Path, jaxbench_wheel: str, tmp_path: Path
) -> None:
    repo = make_history(history, tmp_path / history.package)
    root = repo.root
    said = _adopt(history, root, jaxbench_wheel)
    if history.shape == "benchmark-workflows":
        for found in (".github/workflows/benchmark.yml", ".github/workflows/codspeed.yml"):
            assert re.search(rf"found {re.escape(found)}.*left alone", said), said
    (root / "benchmarks" / "double.py").write_text(double_suite(history.package), "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "benchmarks: jaxbench", date="2024-01-02T00:00:00+00:00")
    (root / ".asv").mkdir(exist_ok=True)
    (root / ".asv" / "env").symlink_to(shared_env, target_is_directory=True)

    check = make(root, "bench-check", timeout=TIMEOUT)
    assert check.returncode == 0, _tail(check)
    assert not re.search(r"\sfailed\s*$", check.stdout, re.MULTILINE), _tail(check)

    commits = 4 if history.clone_without_tags else 3
    clock = time.perf_counter()
    bench = make(
        root, "bench", f"COMMITS={commits}", "ASV_ARGS=-b ^double", PAIR_ARGS, timeout=TIMEOUT
    )
    took = time.perf_counter() - clock
    assert bench.returncode == 0, _tail(bench)
    runs = load_paired(root / "results", machine=MACHINE)
    assert len(runs) == commits - 1, _tail(bench)
    timed = [r for r in runs if r.estimates and not r.untimed and r.error is None]
    assert timed == runs, [(r.error, r.untimed) for r in runs]

    base = git(root, "rev-parse", "HEAD")
    git(root, "commit", "-q", "--allow-empty", "-m", "A/A: nothing changed")
    head = git(root, "rev-parse", "HEAD")
    scratch = tmp_path / "review-scratch"
    scratch.mkdir()
    steps = run_review_steps(root, base, head, scratch)
    comment_file = scratch / "review" / "comment.md"
    comment = comment_file.read_text(encoding="utf-8") if comment_file.exists() else ""
    *ran, last = steps
    assert not [(n, out[-3000:]) for n, status, out in ran if status != 0], comment
    status = (scratch / "review" / "compare-exit-code").read_text().strip()
    assert last[:2] == ("Fail on a regression", int(status)), (last, comment)
    # An A/A pull request: nothing newly failing, no exact figure changed (XLA's
    # work, the answer). Timed figures are not asserted here: the shapes share
    # the machine with each other (the tier's two processes, no lock, to keep it
    # short), and a review timed beside another shape's asv run may read that as
    # a change; the review's false-alarm rate on a machine of its own is
    # asserted in tests/test_review.py and measured over many reviews by
    # bench/bench_review.py. What this review said goes into the table.
    rows = json.loads((root / ".asv" / "review" / "review.json").read_text(encoding="utf-8"))
    flagged = [r for r in rows["rows"] if r["category"] is not None]
    exact = [r for r in flagged if r["category"] not in TIMED]
    assert not exact, comment
    assert status in ("0", "1"), comment
    assert (status == "1") == bool(flagged), comment
    moved = re.findall(r"\d+ (?:regressions?|changed|improvements?)\b", comment.split("\n\n")[1])
    review = f"A/A: exit {status}, " + (", ".join(moved) if moved else "nothing changed")
    if flagged:
        review += " (timed beside another shape)"
    git(root, "reset", "-q", "--hard", base)

    broken = BROKEN_SUITE.replace("{package}", history.package)
    (root / "benchmarks" / "broken.py").write_text(broken, encoding="utf-8")
    again = make(root, "bench", "COMMITS=1", "ASV_ARGS=-b ^broken", PAIR_ARGS, timeout=TIMEOUT)
    assert again.returncode == 0, _tail(again)
    # the listing names it, with its cause: "<name>  failed at 1 of 1 commits: <error>"
    named = re.search(r"(broken\.Broken\S*)  failed at [^:\n]*: ([^\n]*)", again.stdout)
    assert named is not None, _tail(again)
    assert "ReferenceMismatch" in again.stdout or "tolerance" in again.stdout, _tail(again)
    if history.name == "src-setuptools":
        _a_suite_that_does_not_import_fails_the_job_and_loses_nothing(root)
    _record(
        Row(
            shape=history.name,
            init="ok",
            bench_check="ok",
            make_bench_seconds=round(took, 1),
            pairs_timed=len(timed),
            pairs=len(runs),
            review=review,
            failing_named=f"{named.group(1)}: {named.group(2).strip()}"[:90],
        )
    )


def _a_suite_that_does_not_import_fails_the_job_and_loses_nothing(root: Path) -> None:
    """A suite file with a syntax error: make bench exits non-zero, the file and line
    in its last lines, and every result already measured is still there, unchanged."""
    results = root / "results"
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and p.suffix != ".npz"}
    (root / "benchmarks" / "bad.py").write_text("import numpy\n\ndef time_x(:\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a suite file that does not compile",
        date="2024-01-03T00:00:00+00:00")  # fmt: skip
    done = make(root, "bench", "COMMITS=1", PAIR_ARGS, timeout=TIMEOUT)
    assert done.returncode != 0, _tail(done)
    last = (done.stdout + done.stderr).strip().splitlines()[-3:]
    said = "\n".join(last)
    assert "make bench: failed: asv could not import the benchmark suite: " in said, said
    assert "benchmarks/bad.py, line 3: SyntaxError" in said, said
    after = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and p.suffix != ".npz"}
    assert {p: after.get(p) for p in before} == before  # nothing measured is lost
    assert (root / "html" / "index.html").is_file()  # what was measured is still published


#: A library's own asv set-up in a subfolder (``asv_bench/``, ``"repo": ".."``, as
#: pandas and xarray keep theirs) with a suite of plain asv ``time_*`` benchmarks (no
#: jax_suite) and no build_command: jaxbench init is never run.
SUBFOLDER_PROJECT = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
    'build-backend = "setuptools.build_meta"\n\n[project]\nname = "subjax"\n'
    'version = "0.1.0"\ndependencies = ["jax", "numpy"]\n',
    "src/subjax/__init__.py": "import jax.numpy as jnp\n\n\n"
    "def double(x):\n    return 2.0 * jnp.tanh(x)\n",
    "asv_bench/benchmarks/__init__.py": "",
    "asv_bench/benchmarks/bench_double.py": "import numpy as np\n\nimport subjax\n\n\n"
    "class TimeDouble:\n    def setup(self):\n        self.x = np.ones(1000, dtype=np.float32)\n"
    "\n    def time_double(self):\n        subjax.double(self.x).block_until_ready()\n",
}
SLOWER_DOUBLE = (
    "import jax.numpy as jnp\n\n\ndef double(x):\n    y = jnp.tanh(x)\n"
    "    for _ in range(20):\n        y = jnp.tanh(y + x)\n    return 2.0 * y\n"
)


def _subfolder_review(root: Path, base: str, head: str) -> subprocess.CompletedProcess[str]:
    config = root / "asv_bench" / "asv.conf.json"
    return jaxbench(root, "review", base, head, "--config", str(config), "--budget", "1m")


def test_a_library_s_own_asv_set_up_in_a_subfolder_is_reviewed(
    shared_env: Path, tmp_path: Path
) -> None:
    """``jaxbench review --config asv_bench/asv.conf.json`` on such a project: asv's
    default build stops it with the fix in one line; with the fix, the review times the
    warm times side by side (no figures, no first calls: said, not failed), and a head
    that does 20 more tanh layers fails it."""
    root = tmp_path / "subjax"
    write_files(root, SUBFOLDER_PROJECT)
    conf = {"version": 1, "project": "subjax", "repo": "..", "branches": ["main"],
            "environment_type": "virtualenv", "pythons": ["3.11"],
            "matrix": {"req": {"jax": [JAX]}}, "benchmark_dir": "benchmarks",
            "env_dir": "env", "results_dir": "results", "html_dir": "html"}  # fmt: skip
    config = root / "asv_bench" / "asv.conf.json"
    config.write_text(json.dumps(conf, indent=4), encoding="utf-8")
    (root / "asv_bench" / "env").symlink_to(shared_env, target_is_directory=True)
    (root / ".gitignore").write_text("asv_bench/env\nasv_bench/.asv/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "subjax and its asv_bench/")
    git(root, "commit", "-q", "--allow-empty", "-m", "A/A")
    done = _subfolder_review(root, "HEAD~1", "HEAD")
    assert done.returncode == 2, _tail(done)
    said = done.stderr.strip().splitlines()[-1]
    assert said.startswith("jaxbench: error: asv could not build the project: the build made "
                           "several wheels"), said  # fmt: skip
    assert '"python -m pip wheel --no-deps -w {build_cache_dir} {build_dir}"' in said, said

    conf["build_command"] = ["python -m pip wheel --no-deps -w {build_cache_dir} {build_dir}"]
    config.write_text(json.dumps(conf, indent=4), encoding="utf-8")
    git(root, "commit", "-q", "-am", "asv: build the project's wheel alone")
    git(root, "commit", "-q", "--allow-empty", "-m", "A/A again")
    aa = _subfolder_review(root, "HEAD~1", "HEAD")
    # the shapes tier's two processes share the machine: an A/A's timed row may move,
    # so its verdict is not asserted here; that it ran every step is
    assert aa.returncode in (0, 1), _tail(aa)
    for line in ("asv run: no benchmark but warm times (time_*) to run here",
                 "first calls: none (the suite has no first-call benchmark)",
                 "warm times: 1 benchmark(s)"):  # fmt: skip
        assert f"jaxbench review: {line}" in aa.stderr, _tail(aa)
    assert (root / "asv_bench" / ".asv" / "review" / "comment.md").is_file()

    (root / "src" / "subjax" / "__init__.py").write_text(SLOWER_DOUBLE, encoding="utf-8")
    git(root, "commit", "-q", "-am", "double: 20 more tanh layers")
    planted = _subfolder_review(root, "HEAD~1", "HEAD")
    assert planted.returncode == 1, _tail(planted)
    doc = json.loads((root / "asv_bench" / ".asv" / "review" / "review.json").read_text("utf-8"))
    (row,) = doc["rows"]
    assert row["benchmark"] == "bench_double.TimeDouble.time_double"
    assert row["verdict"] == "regression", row
    assert row["ratio"] > 2, row
    assert "paired t over" in row["reason"], row
