"""Tests for jaxbench.store.hlo_store and ``jaxbench hlo-diff`` on a results dir from save_hlo."""

# The captured HLO below is kept verbatim, and XLA writes long lines.

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from asv import results as asv_results
from asv.machine import Machine

from conftest import PVLIB_MACHINE
from conftest import PVLIB_RESULTS as PVLIB
from jaxbench.cli import main
from jaxbench.errors import ResultsError
from jaxbench.store.hlo_store import HLO_FOLDER, list_hlo, load_hlo, machine_name, save_hlo

BASE = "1111111122222222333333334444444455555555"
HEAD = "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeee"
ENV = "virtualenv-py3.11-jax0.10.2"

# ``tanh(x @ w)`` and ``tanh((x @ w) @ (w.T @ w))``, x f32[64,32], w f32[32,16]:
# ``jax.jit(f).lower(x, w).compile().as_text()`` from jax 0.10.2 on the CPU.
DATA = Path(__file__).parent / "data"
PREDICT_HLO = (DATA / "predict.hlo").read_text(encoding="utf-8")
EXTRA_HLO = (DATA / "predict_extra_matmul.hlo").read_text(encoding="utf-8")

ASV_CONF = """\
{
    // asv.conf.json allows comments like this one.
    "version": 1,
    "project": "demo",
    "results_dir": "res" // and here
}
"""


def _environ(conf_dir: Path, commit: str, env: str = ENV) -> dict[str, str]:
    return {
        "ASV_COMMIT": commit,
        "ASV_ENV_NAME": env,
        "ASV_CONF_DIR": str(conf_dir),
        "JAXBENCH_MACHINE": "ci-runner",
    }


@pytest.fixture
def conf_dir(tmp_path: Path) -> Path:
    (tmp_path / "asv.conf.json").write_text(ASV_CONF)
    return tmp_path


@pytest.fixture
def stored(conf_dir: Path) -> Path:
    """A results dir with two commits: predict unchanged, Model gaining two dots."""
    for commit, model in ((BASE, PREDICT_HLO), (HEAD, EXTRA_HLO)):
        environ = _environ(conf_dir, commit)
        for rows in ("64", "96"):
            save_hlo("workloads.Predict", (rows,), PREDICT_HLO, environ=environ)
        save_hlo("workloads.Model", ("'64'",), model, environ=environ)
    return conf_dir / "res"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["hlo-diff", *args])
    out, err = capsys.readouterr()
    return status, out, err


# ---- hlo_store ---------------------------------------------------------------


def test_save_outside_asv_writes_nothing(conf_dir: Path) -> None:
    environ = _environ(conf_dir, BASE)
    del environ["ASV_COMMIT"]
    assert save_hlo("workloads.Predict", ("64",), PREDICT_HLO, environ=environ) is None
    assert not (conf_dir / "res").exists()


def test_save_lays_out_and_loads_back(conf_dir: Path) -> None:
    path = save_hlo("workloads.Predict", ("64",), PREDICT_HLO, environ=_environ(conf_dir, BASE))
    assert path is not None
    run_dir = conf_dir / "res" / "ci-runner" / HLO_FOLDER / f"11111111-{ENV}"
    assert path.parent == run_dir
    assert path.name.startswith("workloads.Predict-64-")
    assert path.name.endswith(".hlo.gz")
    assert PREDICT_HLO in gzip.decompress(path.read_bytes()).decode()
    res = conf_dir / "res"
    assert load_hlo(res, "ci-runner", BASE, ENV, "workloads.Predict", ("64",)) == PREDICT_HLO
    assert load_hlo(res, "ci-runner", "111", ENV, "workloads.Predict", ("64",)) == PREDICT_HLO
    with pytest.raises(ResultsError, match=r"workloads.Predict \['96'\].*missing"):
        load_hlo(res, "ci-runner", BASE, ENV, "workloads.Predict", ("96",))
    with pytest.raises(ResultsError, match="no commit matching 'abc'"):
        load_hlo(res, "ci-runner", "abc", ENV, "workloads.Predict", ("64",))


def test_results_dir_override(tmp_path: Path) -> None:
    environ = {"ASV_COMMIT": BASE, "ASV_ENV_NAME": ENV, "JAXBENCH_RESULTS_DIR": str(tmp_path / "r")}
    path = save_hlo("b", (), "HloModule m", environ=environ)
    assert path is not None
    assert path.is_relative_to(tmp_path / "r" / machine_name(environ) / HLO_FOLDER)


def test_unreadable_conf_is_one_clear_error(tmp_path: Path) -> None:
    environ = {"ASV_COMMIT": BASE, "ASV_ENV_NAME": ENV, "ASV_CONF_DIR": str(tmp_path)}
    with pytest.raises(Exception, match="set JAXBENCH_RESULTS_DIR"):
        save_hlo("b", (), "HloModule m", environ=environ)


def test_default_machine_name_is_asvs() -> None:
    assert machine_name({}) == Machine.get_unique_machine_name()
    assert machine_name({"JAXBENCH_MACHINE": "m1"}) == "m1"


@pytest.mark.parametrize(
    ("benchmark", "params", "machine"),
    [
        ("../../../escape", ("../..", "/etc/passwd"), "../../up"),
        ("a/b", ("\x00\n",), "."),
        ("..", (), ".."),
    ],
)
def test_untrusted_names_stay_inside(
    conf_dir: Path, benchmark: str, params: tuple[str, ...], machine: str
) -> None:
    environ = {**_environ(conf_dir, BASE, env="../env"), "JAXBENCH_MACHINE": machine}
    path = save_hlo(benchmark, params, "HloModule m", environ=environ)
    assert path is not None
    res = (conf_dir / "res").resolve()
    assert path.resolve().is_relative_to(res)
    assert path.resolve().parent.parent.parent.parent == res
    [entry] = list_hlo(res)
    assert (entry.benchmark, entry.params) == (benchmark, params)
    assert load_hlo(res, machine, BASE, "../env", benchmark, params) == "HloModule m"


def test_names_that_sanitise_alike_keep_apart(conf_dir: Path) -> None:
    environ = _environ(conf_dir, BASE)
    first = save_hlo("a/b", (), "HloModule first", environ=environ)
    second = save_hlo("a_b", (), "HloModule second", environ=environ)
    assert first != second
    res = conf_dir / "res"
    assert load_hlo(res, "ci-runner", BASE, ENV, "a/b", ()) == "HloModule first"
    assert load_hlo(res, "ci-runner", BASE, ENV, "a_b", ()) == "HloModule second"


def test_asv_reads_past_the_hlo_folder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    machine_dir = results / PVLIB_MACHINE
    machine_dir.mkdir(parents=True)
    shutil.copy(PVLIB / "benchmarks.json", results)
    shutil.copy(PVLIB / PVLIB_MACHINE / "machine.json", machine_dir)
    for name in sorted(p.name for p in (PVLIB / PVLIB_MACHINE).glob("0*.json"))[:3]:
        shutil.copy(PVLIB / PVLIB_MACHINE / name, machine_dir)
        # The history is in format 1; what `asv update` does, file by file.
        asv_results.Results.update(str(machine_dir / name))
    before = sorted((r.commit_hash, r.env_name) for r in asv_results.iter_results(str(results)))
    environ = {
        "ASV_COMMIT": before[0][0],
        "ASV_ENV_NAME": before[0][1],
        "JAXBENCH_RESULTS_DIR": str(results),
        "JAXBENCH_MACHINE": PVLIB_MACHINE,
    }
    save_hlo("detect_clearsky.DetectClear", ("'1'",), PREDICT_HLO, environ=environ)
    after = sorted((r.commit_hash, r.env_name) for r in asv_results.iter_results(str(results)))
    assert len(before) == 3
    assert after == before
    prefix = before[0][0][:6]
    assert (
        asv_results.get_result_hash_from_prefix(str(results), PVLIB_MACHINE, prefix)
        == before[0][0][:8]
    )


# ---- jaxbench hlo-diff -------------------------------------------------------


def test_text_report(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, BASE[:8], HEAD, "--results", str(stored))
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        f"HLO diff 11111111 -> aaaaaaaa (machine ci-runner, env {ENV}): 1 of 3 benchmarks changed"
    )
    assert "workloads.Model ['64']: HLO changed; ops 4 -> 7, fusions 2 -> 3" in lines
    assert any(line.split() == ["dot", "1", "->", "3"] for line in lines)
    assert "workloads.Predict [64]: no HLO change" in lines
    assert "workloads.Predict [96]: no HLO change" in lines
    assert any(line.startswith("  +") and " dot(" in line for line in lines)
    assert "metadata" not in out


def test_filter_and_truncate(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(
        capsys, BASE, HEAD, "--results", str(stored), "--benchmark", "Model$", "--max-lines", "4"
    )
    assert status == 0
    assert "0 of" not in out
    assert "1 of 1 benchmarks changed" in out
    assert "Predict" not in out
    assert (
        sum(
            line.startswith(("  ---", "  +++", "  @@", "  +", "  -", "   "))
            for line in out.splitlines()
        )
        >= 4
    )
    assert "more diff lines not shown" in out


def test_no_change_between_equal_runs(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, BASE, HEAD, "--results", str(stored), "--benchmark", "Predict")
    assert status == 0
    assert "0 of 2 benchmarks changed" in out
    assert out.count("no HLO change") == 2


def test_markdown_is_collapsed_and_escaped(
    conf_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = "workloads.E`v``il.*x*<b>|"
    head_text = EXTRA_HLO.replace(
        '"outer_dimension_partitions"', '"````":1,"outer_dimension_partitions"'
    )
    save_hlo(evil, ("<i>",), PREDICT_HLO, environ=_environ(conf_dir, BASE))
    save_hlo(evil, ("<i>",), head_text, environ=_environ(conf_dir, HEAD))
    status, out, _ = _run(
        capsys, BASE, HEAD, "--results", str(conf_dir / "res"), "--format", "markdown"
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "<details>"
    assert lines[1].startswith("<summary>HLO diff 11111111 -&gt; aaaaaaaa")
    assert lines[2] == ""
    assert lines[-1] == "</details>"
    assert "<b>" not in out
    assert "<i>" not in out
    heading = next(line for line in lines if line.startswith("#### "))
    assert heading == r"#### workloads\.E\`v\`\`il\.\*x\*\<b\>\| \[\<i\>\]"
    assert "| dot | 1 | 3 |" in lines
    # The diff holds a run of four backticks: its fence must be longer.
    assert "`````diff" in lines
    assert lines.count("`````") == 1


def test_unknown_commit(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "deadbeef", HEAD, "--results", str(stored))
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("jaxbench: error: no HLO stored for commit 'deadbeef'")
    assert "11111111, aaaaaaaa" in err
    assert "run the benchmarks for it with asv" in err


def test_missing_results_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(tmp_path / "nope"))
    assert status == 2
    assert "does not exist; pass --results" in err
    assert "Traceback" not in err


def test_no_hlo_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ci-runner").mkdir()
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(tmp_path))
    assert status == 2
    assert err.startswith("jaxbench: error: cannot tell which machine to use (found: none)")


def test_two_envs_need_env(
    stored: Path, conf_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for commit in (BASE, HEAD):
        save_hlo(
            "workloads.Model",
            ("'64'",),
            PREDICT_HLO,
            environ=_environ(conf_dir, commit, "other-env"),
        )
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(stored))
    assert status == 2
    assert f"environment to use (found: other-env, {ENV})" in err
    status, out, _ = _run(capsys, BASE, HEAD, "--results", str(stored), "--env", "other-env")
    assert status == 0
    assert "0 of 1 benchmarks changed" in out


def test_regex_matching_nothing(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(stored), "--benchmark", "^nothing")
    assert status == 2
    assert "no stored HLO matches --benchmark '^nothing'" in err
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(stored), "--benchmark", "(")
    assert status == 2
    assert "is not a regular expression" in err


def test_benchmark_only_on_one_side(
    stored: Path, conf_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_hlo("workloads.New", (), PREDICT_HLO, environ=_environ(conf_dir, HEAD))
    status, out, _ = _run(capsys, BASE, HEAD, "--results", str(stored))
    assert status == 0
    assert "workloads.New: only at head (new)" in out.splitlines()
    assert "2 of 4 benchmarks changed" in out


def test_corrupt_file_is_named(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = sorted(stored.rglob("workloads.Model*.hlo.gz"))[0]
    victim.write_bytes(b"not gzip")
    status, _, err = _run(capsys, BASE, HEAD, "--results", str(stored))
    assert status == 2
    assert str(victim) in err
    assert "delete it and rerun that benchmark" in err


def test_hlo_diff_never_imports_jax(stored: Path) -> None:
    code = (
        "import sys\n"
        "from jaxbench.cli import main\n"
        f"status = main(['hlo-diff', '{BASE}', '{HEAD}', '--results', {str(stored)!r}])\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))\n"
        "print('LEAKED', leaked, status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "LEAKED [] 0"


# ---- with real asv -------------------------------------------------------------

_BENCHMARK = """\
import os
from pathlib import Path

from jaxbench.store.hlo_store import save_hlo


class Predict:
    params = [64]
    param_names = ["rows"]

    def track_asv_commit_visible(self, rows):
        text = Path(os.environ["DEMO_HLO_SOURCE"]).read_text()
        save_hlo("workloads.Predict", (str(rows),), text, environ=os.environ)
        return 1 if "ASV_COMMIT" in os.environ else 0
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_real_asv_run_then_publish_then_hlo_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "project"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "asv.conf.json").write_text(
        json.dumps(
            {
                "version": 1,
                "project": "demo",
                "repo": ".",
                "environment_type": "existing",
                "benchmark_dir": "benchmarks",
                "results_dir": "results",
                "html_dir": "html",
            }
        )
    )
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "benchmarks" / "workloads.py").write_text(_BENCHMARK)
    (tmp_path / "base.hlo").write_text(PREDICT_HLO)
    (tmp_path / "head.hlo").write_text(EXTRA_HLO)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    head = _git(repo, "rev-parse", "HEAD")
    asv = [sys.executable, "-m", "asv"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASV")}
    env |= {
        "JAXBENCH_MACHINE": "demo-box",
        "JAXBENCH_ENV_NAME": "same-python",
        "JAXBENCH_RESULTS_DIR": str(repo / "results"),
    }
    subprocess.run(
        [*asv, "machine", "--yes", "--machine", "demo-box"],
        cwd=repo,
        env=env,
        capture_output=True,
        check=True,
    )
    for commit, source in ((base, "base.hlo"), (head, "head.hlo")):
        run_env = env | {"JAXBENCH_COMMIT": commit, "DEMO_HLO_SOURCE": str(tmp_path / source)}
        subprocess.run(
            [*asv, "run", "--python=same", "--set-commit-hash", commit, "--machine", "demo-box"],
            cwd=repo,
            env=run_env,
            capture_output=True,
            check=True,
            timeout=300,
        )
    results = repo / "results"
    loaded = list(asv_results.iter_results_for_machine(str(results), "demo-box"))
    assert sorted(r.commit_hash for r in loaded) == sorted([base, head])
    # asv sets no ASV_* variables in the benchmark processes of an existing environment.
    assert {
        r.get_result_value("workloads.Predict.track_asv_commit_visible", [["64"]])[0]
        for r in loaded
    } == {0}
    subprocess.run([*asv, "publish"], cwd=repo, env=env, capture_output=True, check=True)
    assert (repo / "html" / "index.html").is_file()
    assert len(list((results / "demo-box" / HLO_FOLDER).rglob("*.hlo.gz"))) == 2

    monkeypatch.chdir(repo)
    status, out, err = _run(capsys, base[:8], head[:8])
    assert (status, err) == (0, "")
    assert "workloads.Predict [64]: HLO changed; ops 4 -> 7, fusions 2 -> 3" in out
