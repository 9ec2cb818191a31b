"""What ``jaxbench init`` asks the world outside the repository's files.

git (is this the top of a repository with a commit, which branch is checked
out, does git ignore a path), pip (which jax the package index serves and
which one it would install with the project), and a fresh interpreter (does
importing the project's package and benchmarks start jax's backend: the
launch method, :mod:`jaxbench.scaffold.launch`). The answers are handed to
the pure planning in :mod:`jaxbench.scaffold`. Never imports jax.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.scaffold.launch import (
    CHECK_SCRIPT,
    CHECK_TIMEOUT,
    Launch,
    benchmark_modules,
    launch_of_answer,
    spawn,
)

__all__ = [
    "LaunchCheck",
    "check_repository",
    "git_ignores",
    "resolve_with_pip",
    "served_versions",
    "start_check",
]

_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
#: Seconds pip may take to answer.
PIP_TIMEOUT = 180


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("git is not installed; install git and run jaxbench init again") from None


def git_ignores(root: Path, path: str) -> bool:
    """Whether a pattern of git's ignore files covers ``path`` (relative to ``root``),
    tracked or not (``git check-ignore --no-index``)."""
    return _git(root, "check-ignore", "-q", "--no-index", "--", path).returncode == 0


def check_repository(root: Path) -> str:
    """The branch checked out at ``root`` ("main" when git names none); UsageError with
    the fix unless ``root`` is the top of a git repository with a commit."""
    if not root.exists():
        raise UsageError(f"{root} does not exist; pass the path of your project's repository")
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory; pass the path of your project's repository")
    done = _git(root, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise UsageError(
            f"{root} is not a git repository; run jaxbench init in your project's "
            "repository (git init, commit the project, then jaxbench init)"
        )
    top = Path(done.stdout.strip()).resolve()
    if top != root.resolve():
        raise UsageError(
            f"{root} is inside the git repository {top}, not its top; "
            f"run jaxbench init {top} (asv benchmarks a whole repository)"
        )
    if _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").returncode != 0:
        raise UsageError(
            f"{root}: the git repository has no commit yet; commit your project, "
            "then run jaxbench init (asv measures commits)"
        )
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    name = branch.stdout.strip()
    return name if branch.returncode == 0 and _BRANCH.match(name) else "main"


def _pip(*args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            [sys.executable, "-m", "pip", *args],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def served_versions(name: str = "jax") -> tuple[str, ...] | None:
    """The versions the package index serves, newest first; None when pip cannot say."""
    done = _pip("index", "versions", name)
    if done is None or done.returncode != 0:
        return None
    for line in done.stdout.splitlines():
        if line.startswith("Available versions:"):
            versions = [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
            return tuple(versions) or None
    return None


def resolve_with_pip(project_root: Path, name: str = "jax") -> str | None:
    """The version of ``name`` pip would install with the project today, or None."""
    done = _pip(
        "install",
        "--dry-run",
        "--quiet",
        "--ignore-installed",
        "--report",
        "-",
        str(project_root),
    )
    if done is None or done.returncode != 0:
        return None
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return None
    for item in report.get("install", []):
        metadata = item.get("metadata", {})
        if str(metadata.get("name", "")).lower() == name:
            version = metadata.get("version")
            return str(version) if version else None
    return None


class LaunchCheck:
    """The check of :func:`start_check`, running beside init's other look-ups."""

    def __init__(
        self,
        process: subprocess.Popen[str] | None,
        python: str,
        import_name: str,
        failed: str = "",
    ) -> None:
        self._process = process
        self._python = python
        self._import_name = import_name
        self._failed = failed

    def result(self) -> Launch:
        """Wait for the check: ``forkserver``, or ``spawn`` and why."""
        if self._process is None:
            return spawn(f"could not check ({self._failed})")
        try:
            out, _ = self._process.communicate(timeout=CHECK_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.close()
            return spawn(f"could not check: {self._python} took over {CHECK_TIMEOUT} s")
        return launch_of_answer(out, self._python, self._import_name, self._process.returncode)

    def close(self) -> None:
        """Stop the check if it still runs (init stopped early): no process is left."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.communicate()


def start_check(
    root: Path, import_name: str, layout: str, *, python: str = sys.executable
) -> LaunchCheck:
    """Start checking, in a fresh ``python``, whether importing the project's package
    and benchmarks starts jax's backend; :meth:`LaunchCheck.result` waits for it."""
    modules: Sequence[str] = [import_name, "jaxbench.measure", *benchmark_modules(root)]
    paths = [str(root / "src")] if layout == "src" else []
    paths.append(str(root))
    inherited = os.environ.get("PYTHONPATH")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([*paths, *([inherited] if inherited else [])])
    )
    try:
        process = subprocess.Popen(
            [python, "-c", CHECK_SCRIPT, *modules],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError as exc:
        return LaunchCheck(None, python, import_name, f"{type(exc).__name__} running {python}")
    return LaunchCheck(process, python, import_name)
