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
