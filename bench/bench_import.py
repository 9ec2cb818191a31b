"""What ``import jax`` costs a fresh process with each ml_dtypes, side by side.

Every fresh process of a benchmark run imports jax: asv's ``spawn`` launches
and ``setup_cache``, ``jaxbench ab``'s and ``first-call``'s rounds, each
review and bisect step. jax requires ``ml_dtypes>=0.5``, and ml_dtypes 0.7.0's
extension module registers its ufunc loops for far longer than 0.6.0's (on
this 2-core machine about half a second of CPU per import; a profile puts it
in numpy's ``PyUFunc_AddLoop`` comparing loop signatures). This script builds
one scratch virtualenv with ``jax==VERSION`` as pip resolves it (the newest
ml_dtypes) and a ``--target`` directory with the other ml_dtypes; then it
times ``python -c "import jax"`` in fresh processes, alternating the two (the
other ml_dtypes first on ``PYTHONPATH``), ``--repeats`` times each, and
prints each side's median and the ratio of the medians::

    .venv/bin/python bench/bench_import.py --repeats 20

``--keep DIR`` keeps (and reuses) the scratch environment.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CODE = "import jax, ml_dtypes; print(ml_dtypes.__version__)"


def build(root: Path, jax: str, other: str) -> tuple[Path, Path]:
    """(the scratch venv's python, the --target dir of the other ml_dtypes)."""
    python = root / "venv" / "bin" / "python"
    target = root / f"ml_dtypes-{other}"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "virtualenv", "-q", str(root / "venv")], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, f"jax=={jax}"], check=True)
        subprocess.run([*pip, "--no-deps", "--target", str(target), f"ml_dtypes=={other}"],
                       check=True)  # fmt: skip
    return python, target


def timed(python: Path, pythonpath: str | None) -> tuple[float, str]:
    """(seconds, ml_dtypes version) of one fresh ``import jax``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    start = time.perf_counter()
    done = subprocess.run([str(python), "-c", CODE], env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return time.perf_counter() - start, done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", default="0.10.2")
    parser.add_argument("--other", default="0.6.0", help="the ml_dtypes to compare with")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-import-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        python, target = build(root, args.jax, args.other)
        times: dict[str, list[float]] = {}
        for i in range(args.repeats):
            sides = [None, str(target)] if i % 2 == 0 else [str(target), None]
            for side in sides:
                seconds, version = timed(python, side)
                times.setdefault(version, []).append(seconds)
        medians = {v: statistics.median(t) for v, t in times.items()}
        for version, median in medians.items():
            print(f"ml_dtypes {version}: import jax {median * 1000:.0f} ms (median of "
                  f"{len(times[version])} fresh processes)")  # fmt: skip
        slow, fast = max(medians, key=medians.__getitem__), min(medians, key=medians.__getitem__)
        print(f"ratio ml_dtypes {slow} / {fast}: {medians[slow] / medians[fast]:.2f}x; "
              f"{(medians[slow] - medians[fast]) * 1000:.0f} ms more per process")  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
