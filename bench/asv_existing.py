"""The asv.conf.json the bench scripts use: asv in this virtualenv, no new environment.

``environment_type: existing`` (``asv run --python=same``) on this repository's
commits, with the benchmark and results folders the script chooses.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_conf(path: Path, *, benchmark_dir: Path, results_dir: Path, html_dir: Path) -> Path:
    """Write the config to ``path`` (creating its folder) and return ``path``."""
    conf = {
        "version": 1,
        "project": "jaxbench",
        "repo": str(ROOT),
        "branches": ["HEAD"],
        "environment_type": "existing",
        "benchmark_dir": str(benchmark_dir),
        "results_dir": str(results_dir),
        "html_dir": str(html_dir),
        "launch_method": "forkserver",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(conf))
    return path
