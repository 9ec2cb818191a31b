"""Reproduce ``tests/data/pvlib/results`` from pvlib's public asv history.

Usage::

    git clone https://github.com/pvlib/pvlib-benchmarks
    git -C pvlib-benchmarks checkout 95acc373ce31e66e78cdb8fd0c729ef9c5e2199b
    python tests/data/pvlib/trim.py pvlib-benchmarks/results tests/data/pvlib/results

What it keeps (see PROVENANCE.md): one machine, every result file of it, and
in each file only the five benchmarks the tests use. Every top-level key of a
result file is kept; the per-benchmark ones are filtered. One file is copied
byte for byte (for format checks). Files are written the way asv 0.4 wrote
them: result files as ``json.dumps(data)``, benchmarks.json with
``indent=4, sort_keys=True``, machine.json copied.

Trimming is idempotent: run on the trimmed copy it writes the same bytes, which
``tests/test_results.py`` checks.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

MACHINE = "pvlib-asv.forecasting.energy.arizona.edu"
BENCHMARKS = (
    "detect_clearsky.DetectClear.time_detect_clearsky",
    "irradiance.Irradiance.time_aoi",
    "irradiance.Irradiance.time_aoi_projection",
    "temperature.Fuentes.time_fuentes",
    "tracking.SingleAxis.time_singleaxis",
)
#: copied unmodified: format checks read benchmarks that benchmarks.json lacks
UNMODIFIED = (
    "5a21ca46-conda-py3.6-ephem3.7.6.0-numba0.36.1-numpy1.12.0-pandas0.22.0"
    "-pytables3.6.1-scipy1.2.0.json"
)
#: the top-level keys of a format-1 result file that are keyed by benchmark name
PER_BENCHMARK = ("results", "started_at", "ended_at", "benchmark_version", "profiles")


def trim_benchmarks_json(data: dict[str, Any]) -> dict[str, Any]:
    """benchmarks.json restricted to :data:`BENCHMARKS`, without their source code."""
    out: dict[str, Any] = {"version": data["version"]}
    for name in BENCHMARKS:
        out[name] = {k: v for k, v in data[name].items() if k != "code"}
    return out


def trim_result(data: dict[str, Any]) -> dict[str, Any]:
    """A result file with its per-benchmark entries restricted to :data:`BENCHMARKS`."""
    out = dict(data)
    for key in PER_BENCHMARK:
        if isinstance(data.get(key), dict):
            out[key] = {k: v for k, v in data[key].items() if k in BENCHMARKS}
    return out


def trim(source: Path, dest: Path) -> int:
    """Write the trimmed copy of the results directory ``source`` to ``dest``."""
    (dest / MACHINE).mkdir(parents=True, exist_ok=True)
    bench = json.loads((source / "benchmarks.json").read_text(encoding="utf-8"))
    (dest / "benchmarks.json").write_text(
        json.dumps(trim_benchmarks_json(bench), indent=4, sort_keys=True), encoding="utf-8"
    )
    shutil.copyfile(source / MACHINE / "machine.json", dest / MACHINE / "machine.json")
    count = 0
    for path in sorted((source / MACHINE).glob("*.json")):
        if path.name == "machine.json":
            continue
        target = dest / MACHINE / path.name
        if path.name == UNMODIFIED:
            shutil.copyfile(path, target)
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
            target.write_text(json.dumps(trim_result(data)), encoding="utf-8")
        count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("source", type=Path, help="pvlib-benchmarks/results")
    parser.add_argument("dest", type=Path, help="where the trimmed copy goes")
    args = parser.parse_args(argv)
    count = trim(args.source, args.dest)
    print(f"{count} result files written to {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
