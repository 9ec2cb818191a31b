"""The README's and the guide's benchmark examples run as a user would run them.

Every ```python block, in README.md or a page of docs/, whose first line is
``# benchmarks/NAME.py`` is written
to a fresh project's ``benchmarks/`` folder; then, from that folder's
parent, the README's own command (``jaxbench report --workload
benchmarks.NAME:make_workload --param ...``) must print a checked report, and
asv_runner must discover the classes the module makes, and a real ``asv run``
(``--python=same``, in a git repository of the project) must record every
example's warm time, accuracy and work.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_repo import asv_run_same

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Where the examples are: the README and every page of the guide.
SOURCES = [README, *sorted((ROOT / "docs").glob("*.md"))]
# A block may be indented (inside a list item): the indentation is removed.
BLOCK = re.compile(
    r"^( *)```python\n\1(# benchmarks/(\w+)\.py\n.*?)^\1```", re.DOTALL | re.MULTILINE
)


def examples() -> dict[str, str]:
    found: dict[str, str] = {}
    for source in SOURCES:
        for indent, code, name in BLOCK.findall(source.read_text(encoding="utf-8")):
            code = re.sub(rf"(?m)^{indent}", "", code)
            assert found.get(name, code) == code, f"two different examples {name}.py ({source})"
            found[name] = code
    assert {"my_model", "my_training"} <= set(found), "the guide's examples moved"
    return found


TINYJAX = "import jax.numpy as jnp\n\n\ndef layer(x, w):\n    return jnp.tanh(x @ w)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    for name, code in examples().items():
        (bench / f"{name}.py").write_text(code)
    # The adoption example imports the user's own package: here, a tiny one.
    (tmp_path / "tinyjax.py").write_text(TINYJAX)
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith("ASV")}
    return {**env, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(project)}


@pytest.mark.parametrize(
    ("module", "factory", "param", "kind", "label"),
    [
        ("my_model", "make_workload", "batch=32", "numpy", "predict-batch=32"),
        ("my_training", "make_workload", "batch=64", "float64", "train_step-batch=64"),
        ("layer", "layer_workload", "rows=64", "numpy", "layer-rows=64"),
        ("my_first", "make_workload", "rows=1024", "numpy", "softmax-rows=1024"),
    ],
)
def test_the_readme_example_reports(
    project: Path, module: str, factory: str, param: str, kind: str, label: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "report", "--repeats", "3",
         "--workload", f"benchmarks.{module}:{factory}", "--param", param],
        capture_output=True, text=True, cwd=project, env=_env(project), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no warning: nothing captured
    data = json.loads(done.stdout)
    assert data["workload"] == label
    assert data["reference"]["kind"] == kind
    assert 0 <= data["tolerance_used"] <= 1
    assert data["work"]["flops"] > 0


def test_asv_discovers_the_readme_suites(project: Path) -> None:
    script = (
        "import sys, json; from asv_runner.discovery import disc_benchmarks; "
        "print(json.dumps(sorted(b.name for b in disc_benchmarks(sys.argv[1]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(project / "benchmarks")],
        capture_output=True, text=True, cwd=project, env=_env(project), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = set(json.loads(done.stdout))
    for suite in ("my_model.Predict", "my_training.TrainStep", "layer.Layer", "my_first.Softmax"):
        assert f"{suite}.time_warm" in names
        assert f"{suite}Figures.track_tolerance_used" in names
        assert f"{suite}Figures.track_workload_peak_rss_bytes" in names


@pytest.mark.e2e
def test_every_readme_example_under_a_real_asv_run(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # the project's tinyjax, as if installed (asv drops PYTHONPATH, keeps ASV_PYTHONPATH)
    env = {**_env(project), "HOME": str(home), "JAXBENCH_MACHINE": "readme-box",
           "ASV_PYTHONPATH": str(project)}  # fmt: skip
    done, results = asv_run_same(project, "readme-box", env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]  # was: my_training's figures failed (exit 2)
    assert "Array has been deleted" not in output
    suites = {
        "my_model.Predict": 2,
        "my_training.TrainStep": 1,
        "layer.Layer": 1,
        "my_first.Softmax": 1,
    }
    for suite, combos in suites.items():
        for name in ("time_warm", "track_tolerance_used", "track_work_flops"):
            full = f"{suite}Figures.{name}" if name.startswith("track") else f"{suite}.{name}"
            values = results[full][0]
            assert len(values) == combos, full
            assert all(v is not None and not math.isnan(v) and v >= 0 for v in values), full
        assert all(v <= 1 for v in results[f"{suite}Figures.track_tolerance_used"][0])
