"""A scratch git repository of this project, for the history benchmarks
(``bench_aa_history.py``, ``bench_planted_history.py``): one environment (jax
0.10.2, the suite's other requirements as pinned, 4 logical CPU devices), and
the small process helpers they share."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
MACHINE = "bench-review"
JAX = "0.10.2"
XLA_FLAGS = "--xla_force_host_platform_device_count=4"
ASV = str(Path(sys.executable).parent / "asv")


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


def copy_package(root: Path) -> None:
    """This project's package (src and pyproject.toml) into ``root``, made here."""
    root.mkdir(parents=True)
    shutil.copytree(
        PROJECT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    shutil.copy2(PROJECT / "pyproject.toml", root / "pyproject.toml")


def write_project(root: Path, readme: str) -> None:
    """A copy of this project at ``root`` (src, benchmarks, pyproject.toml), its
    asv.conf.json cut to one environment, ``readme`` as its README."""
    sys.path.insert(0, str(PROJECT / "src"))
    from jaxbench.store.jsonc import loads  # asv.conf.json has comments

    copy_package(root)
    shutil.copytree(
        PROJECT / "benchmarks",
        root / "benchmarks",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    conf = loads((PROJECT / "asv.conf.json").read_text(encoding="utf-8"))
    # One environment: jax JAX, the suite's other requirements (optax, equinox) as pinned.
    reqs = {name: list(versions)[-1:] for name, versions in conf["matrix"]["req"].items()}
    conf["matrix"] = {"req": {**reqs, "jax": [JAX]}, "env": {"XLA_FLAGS": [XLA_FLAGS]}}
    conf["branches"] = ["main"]
    (root / "asv.conf.json").write_text(json.dumps(conf, indent=2), encoding="utf-8")
    (root / "README.md").write_text(readme, encoding="utf-8")
    (root / ".gitignore").write_text("/results/\n/.asv/\n/html/\n", encoding="utf-8")


def make_repo(root: Path) -> str:
    """The scratch repository; returns the base commit."""
    write_project(root, "# scratch copy for the history benchmarks\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base")
    return git(root, "rev-parse", "HEAD")
