"""A throw-away git repository of this project, and real asv runs over it.

Used by ``tests/test_e2e_asv.py``. :func:`make_repo` copies ``src/``,
``pyproject.toml`` and ``benchmarks/`` into a fresh git repository with a
small suite (``Predict``, rows 64 only) and an ``asv.conf.json`` of one
environment (jax 0.10.2, 4 logical CPU devices), then commits:

* ``c1``: the project as is;
* ``c2``: predict does real extra work that keeps the answer (a 256 x 256
  Gram matrix of tiled inputs, multiplied by 0 and added): XLA keeps it, so
  the flops grow ~500x and a warm call costs ~10x more;
* ``c3``: a no-op change (README only);
* ``c4``: predict's answer is 1 % off (outside the tolerance).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_NAME",
    "MACHINE",
    "QUICK_FIGURES",
    "E2eRepo",
    "asv",
    "asv_environ",
    "asv_run_same",
    "asv_setup",
    "git",
    "jaxbench_cli",
    "make_repo",
    "write_conf",
]

MACHINE = "e2e"
ENV_NAME = "virtualenv-py3.11-jax0.10.2-XLA_FLAGS--xla_force_host_platform_device_count=4"
PROJECT = Path(__file__).resolve().parents[1]
#: The module holding ``predict``, inside the project's src/ (edited by the commits below).
WORKLOADS = Path("src", "jaxbench", "measure", "workloads.py")
ASV_BIN = Path(sys.executable).parent / "asv"

PREDICT = "def predict(x: Any, w: Any) -> Any:\n    return jnp.tanh(x @ w)\n"
PREDICT_SLOWER = (
    "def predict(x: Any, w: Any) -> Any:\n"
    "    big = jnp.tile(x, (4, 8))  # real extra work, kept by XLA, answer unchanged\n"
    "    return jnp.tanh(x @ w) + 0.0 * jnp.sum(big.T @ big)\n"
)
PREDICT_WRONG = "def predict(x: Any, w: Any) -> Any:\n    return jnp.tanh(x @ w) * 1.01\n"

BENCHMARKS = '''\
"""The end-to-end test's suite: Predict at 64 rows, fewer processes than the real one."""

from jaxbench.measure.asvsuite import jax_suite

Predict, PredictFigures = jax_suite("Predict", "predict", params={"rows": [64]})
# 4 processes x 5 samples: compare splits them back into rounds (repeat, from
# benchmarks.json) and tests the 4 round medians a side.
Predict.rounds = 4
Predict.repeat = 5
'''


@dataclass(frozen=True)
class E2eRepo:
    """The repository and the full hashes of its four commits, oldest first."""

    root: Path
    commits: tuple[str, str, str, str]

    @property
    def results(self) -> Path:
        return self.root / "results"

    def result_file(self, commit: str, results: Path | None = None) -> Path:
        return (results or self.results) / MACHINE / f"{commit[:8]}-{ENV_NAME}.json"


def git(root: Path, *args: str, date: str | None = None) -> str:
    """Run git in ``root`` with a fixed identity (and ``date``); return its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "e2e",
        "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
        "GIT_COMMITTER_NAME": "e2e",
        "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
    }
    if date is not None:
        env.update({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def write_conf(
    path: Path, *, results_dir: str, env_dir: str, req: Mapping[str, list[str]] | None = None
) -> None:
    """An asv.conf.json of one environment, with the project's build and launch settings.

    ``req``: more pinned requirements of the matrix (beside jax 0.10.2).
    """
    real = _read_conf(PROJECT / "asv.conf.json")
    conf = {
        "version": 1,
        "project": "jaxbench",
        "repo": ".",
        "branches": ["HEAD"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": ["3.11"],
        "env_dir": env_dir,
        "results_dir": results_dir,
        "html_dir": "html",
        "benchmark_dir": "benchmarks",
        "matrix": {
            "req": {"jax": ["0.10.2"], **(req or {})},
            "env": {"XLA_FLAGS": ["--xla_force_host_platform_device_count=4"]},
        },
        "build_command": real["build_command"],
        "install_command": real["install_command"],
        "uninstall_command": real["uninstall_command"],
        "launch_method": real["launch_method"],
        "regressions_thresholds": real["regressions_thresholds"],
    }
    path.write_text(json.dumps(conf, indent=4) + "\n", encoding="utf-8")


def _read_conf(path: Path) -> dict[str, object]:
    from jaxbench.store.asv_conf import read_asv_conf

    return read_asv_conf(path)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:  # the project's predict changed: update PREDICT above
        raise AssertionError(f"{path}: expected to find {old!r}")
    path.write_text(text.replace(old, new), encoding="utf-8")


def make_repo(root: Path) -> E2eRepo:
    """Copy the project into ``root``, write the test suite and make the four commits."""
    root.mkdir(parents=True)
    shutil.copytree(
        PROJECT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    shutil.copy2(PROJECT / "pyproject.toml", root / "pyproject.toml")
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("", encoding="utf-8")
    (root / "benchmarks" / "workloads.py").write_text(BENCHMARKS, encoding="utf-8")
    (root / "README.md").write_text("# jaxbench (end-to-end test copy)\n", encoding="utf-8")
    (root / ".gitignore").write_text("/results*/\n/.asv/\n/html/\n/.asv-*.json\n", encoding="utf-8")
    write_conf(root / "asv.conf.json", results_dir="results", env_dir=".asv/env")
    workloads = root / WORKLOADS

    git(root, "init", "-q", "-b", "main")
    commits: list[str] = []

    def commit(message: str) -> None:
        # An hour apart: results are ordered by commit date (asv's %at), and
        # four commits made within one second would tie.
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message, date=f"2024-01-01T{len(commits):02d}:00:00+00:00")
        commits.append(git(root, "rev-parse", "HEAD"))

    commit("c1: the project as is")
    _edit(workloads, PREDICT, PREDICT_SLOWER)
    commit("c2: predict does extra work")
    with (root / "README.md").open("a", encoding="utf-8") as readme:
        readme.write("\nA no-op change.\n")
    commit("c3: README only")
    _edit(workloads, PREDICT_SLOWER, PREDICT_WRONG)
    commit("c4: predict's answer is wrong")
    return E2eRepo(root, (commits[0], commits[1], commits[2], commits[3]))


def asv_environ() -> dict[str, str]:
    """The environment of every asv command: our machine name, unbuffered output."""
    environ = dict(os.environ)
    environ.pop("JAXBENCH_RESULTS_DIR", None)
    environ.update({"JAXBENCH_MACHINE": MACHINE, "PYTHONUNBUFFERED": "1"})
    return environ


def asv(
    root: Path,
    args: Sequence[str],
    *,
    timeout: float,
    environ: Mapping[str, str] | None = None,
    ok: Sequence[int] = (0,),
) -> subprocess.CompletedProcess[str]:
    """Run the real asv in ``root``; fail with its output on an exit status not in ``ok``."""
    return _checked([str(ASV_BIN), *args], f"asv {' '.join(args)}", root, timeout, environ, ok)


def asv_setup(root: Path, *, timeout: float, environ: Mapping[str, str] | None = None) -> None:
    """asv builds every environment of ``root``'s asv.conf.json (asv's own ``Setup``).

    Not ``asv setup`` on the command line: asv 0.6.6 returns its list of
    environments as the exit status, so a setup that worked exits 1.
    """
    code = (
        "from asv.commands.setup import Setup\n"
        "from asv.config import Config\n"
        "Setup.run(Config.load('asv.conf.json'))\n"
    )
    _checked([str(ASV_BIN.parent / "python"), "-c", code], "asv's setup", root, timeout, environ)


def _checked(
    argv: Sequence[str],
    what: str,
    root: Path,
    timeout: float,
    environ: Mapping[str, str] | None,
    ok: Sequence[int] = (0,),
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv,
        cwd=root,
        env=dict(environ or asv_environ()),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode not in ok:
        raise AssertionError(f"{what} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def jaxbench_cli(
    cwd: Path, *args: str, timeout: float = 900, environ: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m jaxbench ARGS`` in ``cwd`` (this interpreter), as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        cwd=cwd,
        env=dict(environ or os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


#: What a quick asv run of a user's suites records: a warm time, accuracy, work
#: and compiles per warm call.
QUICK_FIGURES = r"time_warm|track_tolerance_used|track_work_flops|track_compiles_per_call"


def asv_run_same(
    project: Path,
    machine: str,
    env: dict[str, str],
    *,
    quick: bool = True,
    bench: str = QUICK_FIGURES,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """A real ``asv run --python=same --quick`` of ``project``'s ``benchmarks/`` at one commit.

    The project becomes a git repository of one commit with an ``existing``
    asv configuration (this interpreter, no virtualenv), as a user's own
    suites would run in their development environment. Returns asv's process
    and the ``results`` of the one result file it wrote (empty when none).
    ``quick=False``: asv's whole timing loop (every round and sample, samples
    recorded); ``bench``: asv's ``-b`` regular expression.
    """
    conf = {
        "version": 1, "project": project.name, "repo": ".", "branches": ["HEAD"],
        "environment_type": "existing", "benchmark_dir": "benchmarks",
        "results_dir": "results", "html_dir": "html", "launch_method": "forkserver",
    }  # fmt: skip
    (project / "asv.conf.json").write_text(json.dumps(conf))
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the suites")
    commit = git(project, "rev-parse", "HEAD")
    command = [sys.executable, "-m", "asv"]
    subprocess.run([*command, "machine", "--yes", "--machine", machine], cwd=project, env=env,
                   capture_output=True, check=True)  # fmt: skip
    done = subprocess.run(
        [*command, "run", "--python=same",
         *(["--quick"] if quick else ["--record-samples"]), "--show-stderr",
         "--set-commit-hash", commit, "--machine", machine, "-b", bench],
        cwd=project, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    files = [p for p in (project / "results" / machine).glob("*.json") if p.name != "machine.json"]
    results: dict[str, Any] = json.loads(files[0].read_text())["results"] if files else {}
    return done, results
