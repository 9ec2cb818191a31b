"""``jaxbench review BASE HEAD``: the whole review on a real git repository, through real asv.

One module fixture makes the end-to-end repository (``tests/e2e_repo.py``: c1
the project, c2 predict does real extra work, c3 README only, c4 a wrong
answer) and has asv build its environment (``Setup``). Reviewing c1 -> c2
is a planted regression: exit 1, the warm time and XLA's work flagged; the
review runs in a second module fixture, the machine taken alone, writes the
comment and leaves the history's results alone. Bad input is one line and
exit 2. The pure parts (the environment the review picks, the terminal's
summary) are tested without asv. An A/A review (identical code: exit 0, no
changed row) is the written workflow's, on a package that adopted jaxbench
(``tests/test_e2e_init.py``): one A/A review in the tests, not two.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import machine_alone
from e2e_repo import E2eRepo, asv_environ, asv_setup, git, jaxbench_cli, make_repo
from jaxbench.errors import UsageError
from jaxbench.jobs import review as review_job
from jaxbench.store.asv_env import AsvEnv, review_env
from jaxbench.store.asv_log import asv_line

#: some tests take the machine alone while they time (tests/machine_alone.py)
pytestmark = pytest.mark.alone

#: A review of the tests' size: the rounds bend to it (the steps are as a real review's;
#: a minute leaves the warm times about 10 s of rounds).
BUDGET = "60s"
TIMEOUT = 1800


Review = tuple[int, str, str, dict[str, Any]]


def _review(repo: E2eRepo, *args: str) -> Review:
    done = jaxbench_cli(
        repo.root, "review", *args, "--budget", BUDGET, timeout=TIMEOUT, environ=asv_environ()
    )
    work = repo.root / ".asv" / "review"
    found = work / "review.json"
    doc = json.loads(found.read_text(encoding="utf-8")) if found.is_file() else {}
    (repo.root.parent / f"review-{args[0][:8]}-{args[1][:8]}.log").write_text(
        done.stderr, encoding="utf-8"
    )
    return done.returncode, done.stdout, done.stderr, doc


@dataclass(frozen=True)
class Reviewed:
    """The planted review (c1 -> c2) and what it left on disk."""

    planted: Review
    comment: str
    result_files: tuple[str, ...]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> E2eRepo:
    made = make_repo(tmp_path_factory.mktemp("review") / "repo")
    # asv builds the environment here, beside the other test process: the reviews
    # below find it built and take the machine alone only to measure
    asv_setup(made.root, timeout=TIMEOUT)
    return made


@pytest.fixture(scope="module")
def reviewed(repo: E2eRepo) -> Reviewed:
    # it times base and head side by side: alone while it times, beside other tests before
    with machine_alone.handed_over():
        planted = _review(repo, repo.commits[0][:7], repo.commits[1])
    comment = (repo.root / ".asv" / "review" / "comment.md").read_text(encoding="utf-8")
    files = sorted((repo.root / ".asv" / "review" / "results" / "review").glob("*.json"))
    return Reviewed(planted, comment, tuple(f.name for f in files))


@pytest.mark.e2e
def test_a_planted_regression_fails_the_review(reviewed: Reviewed) -> None:
    status, out, said, doc = reviewed.planted
    assert status == 1, said[-4000:]
    categories = {r["category"] for r in doc["rows"]}
    assert {"time", "work"} <= categories, doc["summary"]
    warm = next(r for r in doc["rows"] if r["benchmark"].endswith(".time_warm"))
    assert warm["verdict"] == "regression", warm
    assert "paired t over" in warm["reason"], warm  # tested at the samples a round ab took
    assert "regression" in out
    assert "paired t over" in reviewed.comment
    # one step line per step, the time left on each, the whole review's times at the end
    for number, step in enumerate(("asv run", "first calls", "warm times", "compare"), 1):
        assert f"jaxbench review: step {number}/4 {step}, " in said
    assert "jaxbench review: done in " in said
    # asv's output short (its steps, a line per side's benchmarks), whole in its log
    summary = r"^asv run: \d+ results \(2 commits, 1 environment\), none failed; its whole output: "
    assert re.search(summary + r".*asv-run\.log$", said, re.MULTILINE), said[-4000:]
    assert not [line for line in said.splitlines() if asv_line(line).benchmark is not None]
    assert "asv's last words" not in said  # asv ended as it should


@pytest.mark.e2e
def test_a_review_leaves_the_history_alone(repo: E2eRepo, reviewed: Reviewed) -> None:
    assert not repo.results.exists()  # asv's results went to .asv/review/results
    files = {name[:8] for name in reviewed.result_files}
    assert files == {repo.commits[0][:8], repo.commits[1][:8], "machine."}
    assert git(repo.root, "status", "--porcelain") == ""  # nothing left beside asv.conf.json


@pytest.mark.e2e
def test_an_environment_asv_cannot_build_is_one_line_and_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    conf = json.loads((repo.root / "asv.conf.json").read_text(encoding="utf-8"))
    conf["matrix"]["req"]["jax"] = ["0.0.1"]  # no such jax: asv cannot build it
    (repo.root / "asv.conf.json").write_text(json.dumps(conf), encoding="utf-8")
    done = jaxbench_cli(
        repo.root, "review", repo.commits[1], repo.commits[2], timeout=TIMEOUT,
        environ=asv_environ(),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("jaxbench: error: asv run exited with status"), last
    assert "asv-run.log" in last


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchcommit", "HEAD"], "BASE 'nosuchcommit' is not a commit of the repository"),
        (["HEAD", "HEAD"], "BASE and HEAD are the same commit"),
        (["HEAD~1", "HEAD", "--env", "nope"], "no asv environment named 'nope'"),
        (["HEAD~1", "HEAD", "--machine", "a b"], "machine name 'a b'"),
        (["HEAD~1", "HEAD", "--budget", "soon"], "'soon' is not a duration"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "asv.conf.json").write_text(
        json.dumps({"version": 1, "project": "p", "repo": ".", "branches": ["main"],
                    "environment_type": "virtualenv", "pythons": ["3.11"],
                    "matrix": {"req": {"jax": ["0.10.2"]}}}),
        encoding="utf-8",
    )  # fmt: skip
    git(root, "init", "-q", "-b", "main")
    for n in range(2):
        (root / "README.md").write_text(f"{n}\n", encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"c{n}")
    done = jaxbench_cli(root, "review", *args, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr
    assert not (root / ".asv").exists()  # nothing half-written


def test_no_asv_conf_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = jaxbench_cli(tmp_path, "review", "HEAD~1", "HEAD", timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "asv.conf.json: no such file" in done.stderr


def _env(name: str, jax: str | None, **more: str) -> AsvEnv:
    requirements = {**({"jax": jax} if jax is not None else {}), **more}
    return AsvEnv(name, "", None, requirements=tuple(sorted(requirements.items())))


def test_the_review_measures_the_newest_jax_of_the_matrix() -> None:
    conf = Path("asv.conf.json")
    envs = [_env("a", "0.4.30"), _env("b", "0.10.2"), _env("c", "0.9.2")]
    assert review_env(envs, conf).name == "b"
    # an unpinned jax is asv's newest
    assert review_env([*envs, _env("d", "")], conf).name == "d"
    # one environment: it, whatever it pins
    assert review_env([_env("only", None)], conf).name == "only"
    # the newest jax twice (another package differs): the user picks
    with pytest.raises(UsageError, match=r"2 asv environments could be reviewed \(b, e\)"):
        review_env([*envs, _env("e", "0.10.2", optax="0.2.8")], conf)
    with pytest.raises(UsageError, match="pick one with --env"):
        review_env([_env("x", None), _env("y", None)], conf)


def test_a_wait_for_the_quiet_lock_is_in_no_step_and_not_in_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's step lines on a clock the test moves: 31 s waited for
    $JAXBENCH_QUIET_LOCK in the first calls' step are said once, in the last line."""
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    said: list[str] = []
    place = review_job.ReviewPlace(tmp_path / "asv.conf.json", "m", tmp_path, tmp_path / "c.md")
    steps = review_job._Steps(place, 120.0, said.append)
    steps.start(0)
    now[0] += 20  # asv run
    steps.start(1)
    now[0] += 31
    steps.waited(31.0)
    now[0] += 12  # first calls
    steps.start(2)
    now[0] += 10  # warm times
    steps.start(3)
    assert said[2].endswith("1 min 03 s elapsed, ~1 min 28 s left (of the budget)"), said
    assert steps.finish() == (
        "jaxbench review: done in 1 min 13 s (asv run 20 s, first calls 12 s, warm times 10 s, "
        "compare 0 s; waited 31 s for $JAXBENCH_QUIET_LOCK)"
    )
