"""Each commit's own code, built as asv builds it, once, for any project shape.

Side-by-side timing (``pair-history``, ``ab``, ``first-call``) needs two
commits importable at once in one asv environment, which holds only one.
:func:`commit_site` makes, for a commit and an environment's Python, a folder
that imports that commit's package when put first on ``PYTHONPATH``:

1. asv's own wheel of the commit, where its build cache still holds one
   (asv keeps only ``build_cache_size`` commits, 2 by default);
2. otherwise the commit built here as asv would build it: a ``git clone
   --shared`` of the repository checked out at the commit (its git metadata
   and tags included, so that setuptools_scm and hatch-vcs write their
   ``_version.py``; a clone without tags builds as ``0.1.devN+g<hash>``),
   asv.conf.json's ``build_command`` (asv's own default when it has none),
   run with the environment's Python first on ``PATH``: the project's own
   PEP 517 backend, whatever the layout (``src/``, flat) or backend
   (setuptools, hatchling, flit, pdm, poetry);
3. the wheel unpacked (pure Python) or installed with ``pip install
   --target`` (compiled); where the build command makes no wheel (an
   ``install_command`` that installs the source tree), ``pip install
   --target`` of the checkout.

Sites are kept under ``<env_dir>/.jaxbench-builds/<python tag>/<commit>/``
(beside asv's environments, outside the results and git), so a commit is
built once; the newest :data:`KEEP` commits are kept. A failed build raises
:class:`BuildError` (one line: the commit, the cause, the log kept) and is
remembered for the process, not on disk: the next run tries again. Never
imports jax.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jaxbench.errors import JaxbenchError
from jaxbench.store.asv_env import AsvEnv

__all__ = ["KEEP", "BuildError", "Builds", "builds_of", "commit_site"]

#: Commits whose sites are kept per Python (the oldest others are removed).
KEEP = 64
#: asv's default ``build_command`` (asv 0.6.6's environment.py).
ASV_DEFAULT_BUILD: tuple[str, ...] = (
    "PIP_NO_BUILD_ISOLATION=0 python -m build",
    "python -m pip wheel -w {build_cache_dir} {build_dir}",
)
#: Seconds a build may take (asv's default ``install_timeout``).
BUILD_TIMEOUT = 600.0
_DONE = ".complete"
_BOILERPLATE = re.compile(
    r"(Failed building wheel|subprocess-exited-with-error|Failed to build installable|"
    r"Could not build wheels|metadata-generation-failed|See above for output|"
    r"^\s*(note|hint):|ERROR: Failed to build)",
)
_ERROR_LINE = re.compile(r"^\s*([A-Za-z_.]*(Error|Exception)\b|error:|ERROR:|fatal:)")


class BuildError(JaxbenchError):
    """A commit whose code could not be built (one line: the commit, the cause, the log)."""


@dataclass(frozen=True)
class Builds:
    """Where and how one repository's commits are built."""

    #: the git repository (asv.conf.json's ``repo``)
    repo: Path
    #: where the sites are kept (``<env_dir>/.jaxbench-builds``)
    store: Path
    #: asv.conf.json's ``build_command`` (asv's default where absent)
    build_command: tuple[str, ...] = ASV_DEFAULT_BUILD
    #: asv.conf.json's directory and project name (for the commands' variables)
    conf_dir: Path = Path(".")
    project: str = "project"
    #: failures already met in this process: commit and Python -> message
    failed: dict[tuple[str, str], str] = field(default_factory=dict, compare=False)


def builds_of(config: Path, conf: Mapping[str, object]) -> Builds:
    """The builds of the repository that ``config`` (an asv.conf.json, read as ``conf``) names."""
    conf_dir = config.resolve().parent
    repo = conf_dir
    named = conf.get("repo")
    if isinstance(named, str) and (conf_dir / named).is_dir():
        repo = (conf_dir / named).resolve()
    env_dir = conf.get("env_dir", "env")
    command = conf.get("build_command")
    commands: tuple[str, ...]
    if command is None:
        commands = ASV_DEFAULT_BUILD
    elif isinstance(command, str):
        commands = (command,)
    else:
        commands = tuple(str(c) for c in command) if isinstance(command, list) else ()
    return Builds(
        repo=repo,
        store=conf_dir / str(env_dir) / ".jaxbench-builds",
        build_command=commands,
        conf_dir=conf_dir,
        project=str(conf.get("project", "project")),
    )


@functools.lru_cache(maxsize=32)
def python_tag(python: str) -> str:
    """The interpreter's cache tag and platform, e.g. ``cpython-311-linux-x86_64``."""
    done = subprocess.run(
        [
            python,
            "-c",
            "import sys, sysconfig; print(sys.implementation.cache_tag + '-' + "
            "sysconfig.get_platform())",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    tag = done.stdout.strip()
    if done.returncode != 0 or not tag:
        raise BuildError(f"{python} does not run; rebuild the asv environment (asv run)")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", tag)


def commit_site(builds: Builds, commit: str, env: AsvEnv) -> Path:
    """A folder that imports ``commit``'s package in ``env`` (see the module doc)."""
    tag = python_tag(env.python)
    known = builds.failed.get((commit, tag))
    if known is not None:
        raise BuildError(known)
    home = builds.store / tag / commit
    site = home / "site"
    if (home / _DONE).is_file() and site.is_dir():
        os.utime(home)
        return site
    home.parent.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix=f".{commit[:12]}-", dir=home.parent) as tmp:
            made = _site(builds, commit, env, Path(tmp))
            (made.parent / _DONE).touch()
            if not (home / _DONE).is_file():  # else another process finished it first
                shutil.rmtree(home, ignore_errors=True)
                with contextlib.suppress(OSError):
                    made.parent.rename(home)
    except BuildError as exc:
        builds.failed[(commit, tag)] = str(exc)
        raise
    _prune(home.parent)
    if not (home / _DONE).is_file():
        raise BuildError(f"commit {commit[:12]}: could not keep its build in {home}; check disk")
    return site


def _site(builds: Builds, commit: str, env: AsvEnv, work: Path) -> Path:
    """The site of ``commit`` built in ``work``: ``work/out/site``."""
    out = work / "out"
    (out / "wheel").mkdir(parents=True)
    kept = _asv_wheel(env, commit)
    if kept is not None:
        wheel = Path(shutil.copy2(kept, out / "wheel" / kept.name))
        _unpack(env, wheel, out / "site", commit, work)
        return out / "site"
    checkout = work / "checkout"
    _checkout(builds.repo, commit, checkout)
    wheels = _build(builds, commit, env, checkout, out / "wheel", work / "build.log")
    if wheels:
        _unpack(env, _project_wheel(wheels, builds, commit), out / "site", commit, work)
    else:  # the build command made no wheel: install the source tree as pip builds it
        _pip(env, ["install", "--no-deps", "--no-compile", "--target", str(out / "site"),
                   str(checkout)], commit, work, "install the checkout")  # fmt: skip
    return out / "site"


def _asv_wheel(env: AsvEnv, commit: str) -> Path | None:
    """asv's own wheel of ``commit`` in ``env``'s build cache, where asv kept one."""
    if env.cache is None:
        return None
    wheels = sorted((env.cache / commit).glob("*.whl"))
    return wheels[0] if len(wheels) == 1 else None


def _run(
    args: list[str], cwd: Path, environ: Mapping[str, str], timeout: float = BUILD_TIMEOUT
) -> tuple[int, str]:
    """Run ``args``; (exit status, stdout and stderr together). 124: timed out; 127: not found."""
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=dict(environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return 124, f"{exc.output or ''}\ntimed out after {timeout:.0f} s"
    except OSError as exc:
        return 127, str(exc)
    return done.returncode, done.stdout


def _checkout(repo: Path, commit: str, into: Path) -> None:
    """``commit`` checked out in ``into`` as asv checks it out (a shared clone)."""
    plain = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    steps = [
        ["git", "clone", "--shared", "--no-checkout", "--quiet", str(repo), str(into)],
        ["git", "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit],
    ]
    for i, args in enumerate(steps):
        status, output = _run(args, repo if i == 0 else into, plain, timeout=300)
        if status != 0:
            raise BuildError(
                f"commit {commit[:12]}: git could not check it out of {repo} "
                f"({_cause(output)}); fetch the full history (git fetch --unshallow)"
            )
    if (into / ".gitmodules").is_file():
        _run(
            ["git", "-c", "protocol.file.allow=always", "submodule", "update", "--init",
             "--recursive", "--quiet"], into, plain, timeout=600,
        )  # fmt: skip


def _env_environ(env: AsvEnv, extra: Mapping[str, str] = {}) -> dict[str, str]:
    """The environment asv gives its build commands: the env's ``bin`` first on PATH."""
    bin_dir = str(Path(env.python).parent)
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    environ.update(dict(env.env_vars))
    environ["PATH"] = bin_dir + os.pathsep + environ.get("PATH", "")
    environ["VIRTUAL_ENV"] = str(Path(bin_dir).parent)
    environ["PIP_USER"] = "false"
    environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    environ.update(extra)
    return environ


def _build(
    builds: Builds, commit: str, env: AsvEnv, checkout: Path, wheels: Path, log: Path
) -> list[Path]:
    """Run the build command in ``checkout``; the wheels it wrote into ``wheels``."""
    from asv.util import UserError, interpolate_command

    variables = {
        "build_dir": str(checkout),
        "build_cache_dir": str(wheels),
        "env_dir": str(Path(env.python).parent.parent),
        "conf_dir": str(builds.conf_dir),
        "commit": commit,
        "project": builds.project,
        "env_name": env.name,
        "env_type": "virtualenv",
    }
    globals_ = {f"ASV_{k.upper()}": v for k, v in variables.items()}
    outputs = []
    for command in builds.build_command:
        try:
            args, extra, codes, cwd = interpolate_command(command, variables)
        except UserError as exc:
            raise BuildError(
                f"asv.conf.json build_command {command!r}: {exc}; fix the configuration"
            ) from None
        args[0] = shutil.which(args[0], path=str(Path(env.python).parent)) or args[0]
        status, output = _run(args, Path(cwd or checkout), _env_environ(env, globals_ | extra))
        outputs.append(f"$ {command}\n{output}")
        if codes is None or status in codes:
            continue
        kept = _keep_log(log, builds, commit, outputs)
        raise BuildError(
            f"commit {commit[:12]}: its build failed ({_cause(output)}); the build's output is "
            f"in {kept}; fix the build at that commit, or leave the commit out"
        )
    return sorted(wheels.glob("*.whl"))


def _keep_log(log: Path, builds: Builds, commit: str, outputs: list[str]) -> Path:
    kept = builds.store / f"{commit[:12]}.build.log"
    with contextlib.suppress(OSError):
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text("\n".join(outputs), encoding="utf-8")
        return kept
    return log


def _cause(output: str) -> str:
    """The line of a failed command's output that says why, without pip's boilerplate."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    meaningful = [line for line in lines if not _BOILERPLATE.search(line)]
    for line in reversed(meaningful):
        if _ERROR_LINE.match(line):
            return line[:300]
    return (meaningful or lines or ["no output"])[-1][:300]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _project_wheel(wheels: list[Path], builds: Builds, commit: str) -> Path:
    """The project's own wheel among what the build wrote (asv's default writes its
    dependencies' wheels too)."""
    if len(wheels) == 1:
        return wheels[0]
    mine = [w for w in wheels if _normal(w.name.split("-")[0]) == _normal(builds.project)]
    if len(mine) == 1:
        return mine[0]
    names = ", ".join(w.name for w in wheels)
    raise BuildError(
        f"commit {commit[:12]}: the build wrote {len(wheels)} wheels ({names}) and none is "
        f"named after the project {builds.project!r}; build only the project's wheel "
        "(build_command: python -m pip wheel --no-deps -w {build_cache_dir} {build_dir})"
    )


def _unpack(env: AsvEnv, wheel: Path, site: Path, commit: str, work: Path) -> None:
    """``wheel`` as an importable folder: unzipped when pure Python, else installed by pip."""
    if wheel.name.endswith("-none-any.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        for data in site.glob("*.data"):  # a pure wheel's purelib/platlib, where it has them
            for lib in ("purelib", "platlib"):
                if (data / lib).is_dir():
                    shutil.copytree(data / lib, site, dirs_exist_ok=True)
        return
    _pip(env, ["install", "--no-deps", "--no-compile", "--target", str(site), str(wheel)],
         commit, work, f"install {wheel.name}")  # fmt: skip


def _pip(env: AsvEnv, args: list[str], commit: str, work: Path, what: str) -> None:
    status, output = _run([env.python, "-m", "pip", *args], work, _env_environ(env))
    if status != 0:
        raise BuildError(
            f"commit {commit[:12]}: pip could not {what} ({_cause(output)}); "
            "check that the asv environment's pip works (asv run)"
        )


def _prune(folder: Path) -> None:
    """Keep the newest :data:`KEEP` commits' builds in ``folder``."""
    built = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(built) <= KEEP:
        return
    built.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in built[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
