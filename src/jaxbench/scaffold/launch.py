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
(:func:`jaxbench.measure.forks.refuse_unsafe_fork`).

The check runs in a child process (:mod:`jaxbench.jobs.init_checks` starts
it; this module holds its script and reads its answer): init itself never
imports jax.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CHECK_SCRIPT",
    "CHECK_TIMEOUT",
    "FORKSERVER",
    "METHODS",
    "SPAWN",
    "Launch",
    "benchmark_modules",
    "given_launch",
    "launch_of_answer",
    "spawn",
]

FORKSERVER = "forkserver"
SPAWN = "spawn"
METHODS = (FORKSERVER, SPAWN)

CHECK_TIMEOUT = 180

#: Runs in the fresh interpreter: argv[1:] are the modules to import, in order.
#: Prints one JSON object: {"safe": true}, {"starts": MODULE} or {"unknown": WHY}.
CHECK_SCRIPT = r"""
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


def benchmark_modules(root: Path) -> list[str]:
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


def spawn(why: str) -> Launch:
    """``spawn``, and why."""
    return Launch(SPAWN, why)


def launch_of_answer(output: str, python: str, import_name: str, returncode: int | None) -> Launch:
    """The launch method from what :data:`CHECK_SCRIPT` printed in ``python``."""
    lines = output.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    if answer.get("safe") is True:
        return Launch(FORKSERVER, f"importing {import_name} and benchmarks/ starts no jax backend")
    if isinstance(answer.get("starts"), str):
        return spawn(f"importing {answer['starts']} starts jax's backend")
    if isinstance(answer.get("unknown"), str):
        return spawn(f"could not check: {answer['unknown']}")
    return spawn(f"could not check: {python} exited {returncode} without an answer")
