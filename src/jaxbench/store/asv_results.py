"""Writing asv result files with asv's own ``Results`` class (no jax).

``jaxbench ab`` and ``jaxbench first-call`` add samples to the result files of
two commits. Both open a commit's file with asv's reader (or start a new one,
as ``asv run`` would) and write it back atomically, so a failure leaves the
previous file exactly as it was and other benchmarks' results are kept.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jaxbench.errors import ResultsError, UsageError

__all__ = ["load_or_new", "save_atomic"]


def load_or_new(
    results_dir: Path, machine: str, commit: str, env: str, python: str | None = None
) -> Any:
    """The asv ``Results`` of ``commit`` in ``env``: loaded if its file exists, else new.

    ``python`` (``"3.11"``) defaults to this interpreter's version.
    """
    from asv.results import Results, get_filename

    path = results_dir / get_filename(machine, commit, env)
    if path.is_file():
        try:
            return Results.load(str(path), machine)
        except Exception as exc:  # asv raises its own types for every kind of bad file
            raise ResultsError(
                f"{path}: cannot be updated ({type(exc).__name__}: {exc}); "
                "move it away or re-run asv for that commit"
            ) from None
    python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    date = int(time.time() * 1000)
    return Results({"machine": machine, "python": python}, {}, commit, date, python, env, {})


def save_atomic(result: Any, results_dir: Path) -> Path:
    """Write ``result`` where asv keeps it, through a temporary copy and one rename."""
    from asv.results import get_filename

    target: Path = results_dir / get_filename(
        result.params["machine"], result.commit_hash, result.env_name
    )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".jaxbench-results-", dir=results_dir))
    except OSError as exc:
        raise UsageError(f"cannot write under {results_dir}: {exc.strerror or exc}") from None
    try:
        result.save(str(tmp))
        os.replace(tmp / target.relative_to(results_dir), target)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
