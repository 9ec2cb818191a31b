"""Any JAX project, not only ours: each project shape adopts jaxbench end to end.

For each shape of ``tests/shapes.py`` (a real git repository of a tiny JAX
library: src or flat layout; setuptools, setuptools_scm cloned without
tags, hatch-vcs, flit, poetry-core; a merge history; its own benchmark
workflow; its own asv.conf.json), as a user following the README and what
``jaxbench init`` prints:

1. ``jaxbench init`` (it names what it found and left alone);
2. a suite for the library's ``layer``, as the README's example, committed;
3. ``make bench-check`` (every benchmark but the warm times, once);
4. ``make bench`` over the newest commits, whose paired history must time
   every item of every pair (the project's own build, whatever asv kept);
5. the written pull-request review's steps on an A/A pull request (an empty
   commit): exit 0, no changed row;
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

import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from e2e_repo import MACHINE, git
from jaxbench.store.paired import load_paired
from shapes import SHAPES, Shape, make_shape
from test_e2e_init import jaxbench, make, run_review_steps

pytestmark = [pytest.mark.shapes, pytest.mark.e2e]

JAX = "0.10.2"
#: short pairs and one environment: the tier's budget (what is checked is that
#: every item of every pair is timed, not how finely)
PAIR_ARGS = "PAIR_ARGS=--rounds 3 --second-look 0 --per-round 10"
TIMEOUT = 1800
BROKEN_SUITE = """\
import numpy as np
from jaxbench.measure import Workload, jax_suite

from {package} import layer


def wrong_reference(x, w):
    return np.tanh(x @ w) + 1.0  # not what layer computes: the check must fail


def broken_workload():
    def inputs(rng):
        return rng.normal(size=(8, 32)).astype(np.float32), np.ones((32, 4), np.float32)

    return Workload(name="broken", fn=layer, inputs=inputs, reference=wrong_reference)


Broken, BrokenFigures = jax_suite("Broken", broken_workload)
"""


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


def _record(row: Row) -> None:
    table = os.environ.get("JAXBENCH_SHAPES_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(row)) + "\n")


def _tail(done: object) -> str:
    out = str(getattr(done, "stdout", "")) + str(getattr(done, "stderr", ""))
    return out[-6000:]


def _adopt(shape: Shape, root: Path) -> str:
    """init, as the user runs it; returns what it printed."""
    done = jaxbench(root, "init", "--jax", JAX)
    assert done.returncode == 0, _tail(done)
    return done.stdout + done.stderr


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_a_project_shape_adopts_jaxbench_end_to_end(
    shape: Shape, shared_env: Path, tmp_path: Path
) -> None:
    repo = make_shape(shape, tmp_path / shape.package)
    root = repo.root
    said = _adopt(shape, root)
    if shape.name == "bench-workflows":
        assert ".github/workflows/benchmark.yml" in said, said
    suite = root / "benchmarks" / "layer.py"
    from shapes import layer_suite

    suite.write_text(layer_suite(shape.package), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "benchmarks: jaxbench", date="2024-01-02T00:00:00+00:00")
    (root / ".asv").mkdir(exist_ok=True)
    (root / ".asv" / "env").symlink_to(shared_env, target_is_directory=True)

    check = make(root, "bench-check", timeout=TIMEOUT)
    assert check.returncode == 0, _tail(check)
    assert not re.search(r"\sfailed\s*$", check.stdout, re.MULTILINE), _tail(check)

    commits = 4 if shape.clone_without_tags else 3
    clock = time.perf_counter()
    bench = make(
        root, "bench", f"COMMITS={commits}", "ASV_ARGS=-b ^layer", PAIR_ARGS, timeout=TIMEOUT
    )
    took = time.perf_counter() - clock
    assert bench.returncode == 0, _tail(bench)
    runs = load_paired(root / "results", machine=MACHINE)
    assert len(runs) == commits - 1, _tail(bench)
    timed = [r for r in runs if r.estimates and not r.untimed and r.error is None]
    assert timed == runs, [(r.error, r.untimed) for r in runs]

    head_before = git(root, "rev-parse", "HEAD")
    git(root, "commit", "-q", "--allow-empty", "-m", "A/A: nothing changed")
    head = git(root, "rev-parse", "HEAD")
    steps = run_review_steps(root, head_before, head, tmp_path / "review-scratch")
    failed = [(name, out[-3000:]) for name, status, out in steps if status != 0]
    comment_file = tmp_path / "review-scratch" / "review" / "comment.md"
    comment = comment_file.read_text(encoding="utf-8") if comment_file.exists() else ""
    assert not failed, failed
    exit_code = tmp_path / "review-scratch" / "review" / "compare-exit-code"
    assert exit_code.read_text(encoding="utf-8").strip() == "0", comment
    shown = re.search(r"\d+ (regressions?|changed|improvements?|now failing)\b", comment)
    assert shown is None, comment
    git(root, "reset", "-q", "--hard", head_before)

    (root / "benchmarks" / "broken.py").write_text(
        BROKEN_SUITE.format(package=shape.package), encoding="utf-8"
    )
    again = make(root, "bench", "COMMITS=1", "ASV_ARGS=-b ^broken", PAIR_ARGS, timeout=TIMEOUT)
    assert again.returncode == 0, _tail(again)
    listing = again.stdout
    assert "broken.Broken" in listing, _tail(again)
    named = re.search(r"broken\.Broken\.\S+.*(Reference|mismatch|tolerance)", listing)
    assert named is not None, _tail(again)
    _record(
        Row(
            shape=shape.name,
            init="ok",
            bench_check="ok",
            make_bench_seconds=round(took, 1),
            pairs_timed=len(timed),
            pairs=len(runs),
            review="A/A: exit 0, nothing changed",
            failing_named=named.group(0)[:80],
        )
    )
