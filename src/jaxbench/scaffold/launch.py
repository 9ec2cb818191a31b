"""Which asv launch method ``jaxbench init`` writes: ``forkserver`` where it is safe.

asv's ``"spawn"`` starts a fresh interpreter for every benchmark, and each one
pays jax's import first (1.84-1.97 s on a 2-core runner, docs/measured.md:
about 1.8 s of each benchmark's time in an adopted repository).
``"forkserver"`` imports the benchmark modules once and forks every benchmark
from that process. A fork is safe only while jax's backend has not started:
its threads do not survive the fork, and the child's first jax call hangs. A
module-level jax array or PRNG key, in a benchmark module or in the library it
imports, starts the backend at import time.

So init checks, in a fresh interpreter (this Python, the project's source on
the path, as asv's discovery imports them): import jax, the project's
package, jaxbench's measuring half and every benchmark module there is, then
ask jax whether its backend started. Not started: ``forkserver``. Started, or
not known (jax or the package cannot be imported here): ``spawn``, and why.
A module that starts the backend later is caught at run time: each forked
benchmark stops with an error naming the fix
(:func:`jaxbench.measure.asvsuite._refuse_unsafe_fork`).

The check runs in a child process: init itself never imports jax.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FORKSERVER", "METHODS", "SPAWN", "Launch", "LaunchCheck", "given_launch", "start_check"]

FORKSERVER = "forkserver"
SPAWN = "spawn"
METHODS = (FORKSERVER, SPAWN)

_TIMEOUT = 180

#: Runs in the fresh interpreter: argv[1:] are the modules to import, in order.
#: Prints one JSON object: {"safe": true}, {"starts": MODULE} or {"unknown": WHY}.
_CHECK = r"""
import importlib, json, sys
def say(**answer):
    print(json.dumps(answer))
    sys.exit(0)
try:
    import jax
    from jax._src import xla_bridge
except Exception as exc:
    say(unknown=f"jax cannot be imported by {sys.executable} ({type(exc).__name__}: {exc})")
started = getattr(xla_bridge, "backends_are_initialized", None)
if started is None:
    say(unknown=f"jax {jax.__version__} cannot tell whether its backend started")
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        line = str(exc).splitlines()[0] if str(exc) else ""
        say(unknown=f"importing {name} failed here ({type(exc).__name__}: {line})")
    if started():
        say(starts=name)
say(safe=True)
"""


@dataclass(frozen=True)
class Launch:
    """asv's launch method for the written asv.conf.json, and why, for people."""

    method: str
    why: str


def given_launch(method: str) -> Launch:
    """The launch method a user chose (``--launch-method``)."""
    return Launch(method, "given with --launch-method")


def _benchmark_modules(root: Path) -> list[str]:
    """The modules of ``root/benchmarks`` as asv's discovery imports them."""
    base = root / "benchmarks"
    if not (base / "__init__.py").is_file():
        return []
    names = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if all(part.isidentifier() for part in parts):
            names.append(".".join(parts))
    return names


class LaunchCheck:
    """The check of :func:`start_check`, running beside init's other look-ups."""

    def __init__(self, process: subprocess.Popen[str] | None, python: str, import_name: str,
                 failed: str = "") -> None:  # fmt: skip
        self._process = process
        self._python = python
        self._import_name = import_name
        self._failed = failed

    def result(self) -> Launch:
        """Wait for the check: ``forkserver``, or ``spawn`` and why."""
        if self._process is None:
            return _spawn(f"could not check ({self._failed})")
        try:
            out, _ = self._process.communicate(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.close()
            return _spawn(f"could not check: {self._python} took over {_TIMEOUT} s")
        lines = out.strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else {}
        except json.JSONDecodeError:
            answer = {}
        if not isinstance(answer, dict):
            answer = {}
        if answer.get("safe") is True:
            return Launch(
                FORKSERVER, f"importing {self._import_name} and benchmarks/ starts no jax backend"
            )
        if isinstance(answer.get("starts"), str):
            return _spawn(f"importing {answer['starts']} starts jax's backend")
        if isinstance(answer.get("unknown"), str):
            return _spawn(f"could not check: {answer['unknown']}")
        code = self._process.returncode
        return _spawn(f"could not check: {self._python} exited {code} without an answer")

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
    modules: Sequence[str] = [import_name, "jaxbench.measure", *_benchmark_modules(root)]
    paths = [str(root / "src")] if layout == "src" else []
    paths.append(str(root))
    inherited = os.environ.get("PYTHONPATH")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([*paths, *([inherited] if inherited else [])])
    )
    try:
        process = subprocess.Popen(
            [python, "-c", _CHECK, *modules],
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


def _spawn(why: str) -> Launch:
    return Launch(SPAWN, why)
