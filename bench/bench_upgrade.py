"""``jaxbench upgrade``'s stated power: a dependency's new version that slows one workload.

A real project measured for real: a scratch git repository (a copy of this
project, so its environments install jaxbench) whose suite
(``benchmarks/dep.py``) has two workloads: ``Deep`` runs ten 256 x 256
layers through a dependency, ``jxb-slowdep``, and ``Steady`` uses jax alone.
The dependency is a local package in three versions, wheels written here
into a folder pip finds (``PIP_FIND_LINKS``): 1.0, 1.1 (the same layers
plus two more kept by XLA: 20 % more work, the answer unchanged) and 2.0
(1.0's code again). asv.conf.json's matrix has one environment per version
(jax 0.10.2 in each).

Then ``--planted`` runs of ``jaxbench upgrade --base-env slowdep1.0
--head-env slowdep1.1`` (each must exit 1 and flag rows of ``Deep`` only)
and ``--aa`` runs of ``slowdep1.0 -> slowdep2.0`` (identical code: each must
exit 0 and flag nothing), one after the other, and a table: per try the
exit status, the rows flagged and the wall time. The first try builds the
environments (about a minute each); a ``--workdir`` of an earlier run is
reused, environments and all.

Usage::

    .venv/bin/python bench/bench_upgrade.py --workdir /tmp/upgrade-bench --planted 3 --aa 10
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scratch_repo import PROJECT, copy_package

DEPENDENCY = "jxb-slowdep"
MODULE = "jxb_slowdep"
#: version -> extra layers (kept by XLA, answer unchanged): 1.1 does 20 % more work
VERSIONS = {"1.0": 0, "1.1": 2, "2.0": 0}
MACHINE = "bench-upgrade"
JAX = "0.10.2"
XLA_FLAGS = "--xla_force_host_platform_device_count=4"

LIBRARY = """\
import jax.numpy as jnp

DEPTH = 10
EXTRA = {extra}


def layers(x, w):
    y = x
    for _ in range(DEPTH):
        y = jnp.tanh(y @ w)
    if EXTRA:  # more layers (through w.T: not the same as the first) whose result is kept
        waste = x
        for _ in range(EXTRA):
            waste = jnp.tanh(waste @ w.T)
        y = y + 0.0 * jnp.sum(waste)  # 0.0 * a sum: XLA cannot drop it
    return y
"""

SUITE = '''\
"""A workload through a dependency (jxb-slowdep) and one with jax alone."""

import jax.numpy as jnp
import numpy as np
from jaxbench.measure import Workload, jax_suite

import jxb_slowdep

WIDTH = 256


def deep(x, w):
    return jxb_slowdep.layers(x, w)


def deep_reference(x, w):
    y = x
    for _ in range(10):
        y = np.tanh(y @ w)
    return y


def deep_workload(rows):
    def inputs(rng):
        x = rng.normal(size=(rows, WIDTH)).astype(np.float32)
        w = (rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
        return x, w

    return Workload(
        name="deep", fn=deep, inputs=inputs, reference=deep_reference, params={"rows": rows}
    )


def steady(x):
    return jnp.sin(x) * 2.0


def steady_workload(rows):
    def inputs(rng):
        return (rng.normal(size=(rows, WIDTH)).astype(np.float32),)

    return Workload(
        name="steady",
        fn=steady,
        inputs=inputs,
        reference=lambda x: np.sin(x) * 2.0,
        params={"rows": rows},
    )


Deep, DeepFigures = jax_suite("Deep", deep_workload, params={"rows": [256]})
Steady, SteadyFigures = jax_suite("Steady", steady_workload, params={"rows": [256]})
'''


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(folder: Path, version: str, extra: int) -> Path:
    """A pure-Python wheel of the dependency at ``version`` (``extra`` more layers)."""
    info = f"{MODULE}-{version}.dist-info"
    files = {
        f"{MODULE}/__init__.py": LIBRARY.format(extra=extra).encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {DEPENDENCY}\nVersion: {version}\nRequires-Dist: jax\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: jaxbench-bench\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files.items())
    record += f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{MODULE}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", record)
    return path


@dataclass(frozen=True)
class UpgradeRepo:
    """The scratch project, its one commit, and where pip finds the dependency."""

    root: Path
    commit: str
    wheels: Path

    def environ(self) -> dict[str, str]:
        """What ``asv`` and ``jaxbench`` run with: pip finds the dependency's wheels."""
        env = {k: v for k, v in os.environ.items() if k != "JAXBENCH_RESULTS_DIR"}
        env.update(
            {
                "PIP_FIND_LINKS": str(self.wheels),
                "JAXBENCH_MACHINE": MACHINE,
                "PYTHONUNBUFFERED": "1",
            }
        )
        return env


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def make_upgrade_repo(root: Path) -> UpgradeRepo:
    """The scratch project at ``root`` (see the module doc), committed once.

    Needs jaxbench importable (this project's environment has it); the tests
    call it in their own process, so it leaves ``sys.path`` alone (with
    ``src`` in front, a build's ``src/jaxbench.egg-info`` would stand for the
    installed jaxbench)."""
    from jaxbench.store.jsonc import loads  # asv.conf.json has comments

    copy_package(root)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("", encoding="utf-8")
    (root / "benchmarks" / "dep.py").write_text(SUITE, encoding="utf-8")
    (root / "README.md").write_text("# scratch copy for bench_upgrade\n", encoding="utf-8")
    (root / ".gitignore").write_text("/results/\n/.asv/\n/html/\n/wheels/\n", encoding="utf-8")
    conf = loads((PROJECT / "asv.conf.json").read_text(encoding="utf-8"))
    conf["matrix"] = {
        "req": {"jax": [JAX], DEPENDENCY: list(VERSIONS)},
        "env": {"XLA_FLAGS": [XLA_FLAGS]},
    }
    conf["branches"] = ["main"]
    (root / "asv.conf.json").write_text(json.dumps(conf, indent=2), encoding="utf-8")
    wheels = root / "wheels"
    for version, extra in VERSIONS.items():
        write_wheel(wheels, version, extra)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "a suite through jxb-slowdep")
    return UpgradeRepo(root, _git(root, "rev-parse", "HEAD"), wheels)


@dataclass(frozen=True)
class Try:
    """One ``jaxbench upgrade`` run."""

    kind: str
    status: int
    flagged: tuple[str, ...]
    seconds: float
    document: dict[str, Any]
    stderr: str


def upgrade(repo: UpgradeRepo, *sides: str, budget: str, kind: str) -> Try:
    """``jaxbench upgrade SIDES`` in ``repo`` (e.g. ``--base-env slowdep1.0 --head-env
    slowdep1.1``, or ``--head jxb-slowdep==1.1``), its rows as JSON."""
    clock = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "upgrade", *sides, "--budget", budget,
         "--format", "json"],
        cwd=repo.root, env=repo.environ(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - clock
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = {}
    flagged = tuple(
        sorted(r["benchmark"] for r in document.get("rows", []) if r["category"] is not None)
    )
    return Try(kind, done.returncode, flagged, seconds, document, done.stderr)


def _ok(t: Try) -> bool:
    if t.kind == "planted":
        return t.status == 1 and bool(t.flagged) and all(".Deep" in n for n in t.flagged)
    return t.status == 0 and not t.flagged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the scratch project goes")
    parser.add_argument("--planted", type=int, default=3, help="tries of 1.0 -> 1.1")
    parser.add_argument("--aa", type=int, default=10, help="tries of 1.0 -> 2.0 (A/A)")
    parser.add_argument("--budget", default="8m", help="jaxbench upgrade --budget")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="jaxbench-upgrade-bench-"))
    root = workdir / "project"
    if (root / ".git").is_dir():  # a --workdir of an earlier run: its environments are built
        repo = UpgradeRepo(root, _git(root, "rev-parse", "HEAD"), root / "wheels")
    else:
        repo = make_upgrade_repo(root)
    tries: list[Try] = []
    plan = [("planted", "slowdep1.1")] * args.planted + [("aa", "slowdep2.0")] * args.aa
    for number, (kind, head) in enumerate(plan, 1):
        t = upgrade(
            repo, "--base-env", "slowdep1.0", "--head-env", head, budget=args.budget, kind=kind
        )
        tries.append(t)
        if t.status == 2:
            print(t.stderr[-3000:], file=sys.stderr)
        print(
            f"try {number:2d}  {kind:7s}  exit {t.status}  {t.seconds:6.1f} s  "
            f"{'ok' if _ok(t) else 'WRONG'}  flagged: {', '.join(t.flagged) or 'nothing'}",
            flush=True,
        )
    for kind in ("planted", "aa"):
        of = [t for t in tries if t.kind == kind]
        if of:
            right = sum(_ok(t) for t in of)
            seconds = sorted(t.seconds for t in of)
            print(
                f"{kind}: {right} of {len(of)} right; wall time median "
                f"{seconds[len(seconds) // 2]:.0f} s, longest {seconds[-1]:.0f} s"
            )
    return 0 if all(_ok(t) for t in tries) else 1


if __name__ == "__main__":
    sys.exit(main())
