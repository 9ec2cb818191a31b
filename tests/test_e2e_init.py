"""End to end: ``jaxbench init`` in a throw-away JAX package, then real asv and jaxbench.

One module fixture (:func:`adopted`) makes ``tinyjax`` (``tests/init_repo.py``:
src/ layout, setuptools, numpy and jax, and a ``bench`` extra of tabulate, a
package only the benchmarks need; c1 as is, c2 more work, c3 a no-op), runs
``jaxbench init --jax 0.10.2``, adds a suite for ``tinyjax.layer`` as the
README says (importing tabulate: only the matrix provides it) and the
example of the written BENCHMARKS.md as it stands, and runs the written
``make bench`` over the three commits (the package's suite; asv run, the
paired history, publish, regressions; one virtualenv, paid once) and
``make bench-check`` (every benchmark but the warm times once at HEAD, the
starter and BENCHMARKS.md's example included, nothing saved). Nothing init
wrote is edited. The tests then use ``jaxbench compare``, ``regressions``,
``ab`` and ``publish`` on what asv recorded, open the published site in
headless Chromium, and run the written pr-bench.yml's own steps on an A/A
pull request (head = base + an empty commit).

Other project shapes (a flat layout with hatchling among them) adopt
jaxbench end to end in the shapes tier (tests/test_shapes.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from asv.results import Results

import machine_alone
from e2e_repo import ASV_BIN, MACHINE, asv_environ
from init_repo import LAYER_SUITE, Repo, make_src_package
from jaxbench.store.asv_log import asv_line
from served import served
from test_workflows import run_actionlint, run_zizmor

pytestmark = [pytest.mark.e2e, pytest.mark.alone]

JAX = "0.10.2"
#: Only the matrix provides it: a requirement of tinyjax's bench extra, never installed with it.
MATRIX_ONLY = "tabulate"
MATRIX_ONLY_VERSION = "0.10.0"
ENV_NAME = (
    f"virtualenv-py{sys.version_info.major}.{sys.version_info.minor}-jax{JAX}"
    f"-{MATRIX_ONLY}{MATRIX_ONLY_VERSION}"
)
SUITE = LAYER_SUITE.replace(
    "import numpy as np\n",
    f"import numpy as np\nimport {MATRIX_ONLY}  # the bench extra: only asv's matrix has it\n",
    1,
).replace(
    "    return np.tanh(x @ w)\n",
    f"    assert {MATRIX_ONLY}.tabulate([[1]])\n    return np.tanh(x @ w)\n",
    1,
)
LAYER = "layer.Layer"
FIGURES = "layer.LayerFigures"
PARAMS = [["64"]]
RUN_TIMEOUT = 1200


@dataclass(frozen=True)
class Adopted:
    repo: Repo
    init_output: str
    asv_output: str
    check_output: str
    readme_example: str

    @property
    def root(self) -> Path:
        return self.repo.root

    def value(self, index: int, benchmark: str) -> float | None:
        path = self.root / "results" / MACHINE / f"{self.repo.commits[index][:8]}-{ENV_NAME}.json"
        values = Results.load(str(path)).get_result_value(benchmark, PARAMS)
        value: float | None = values[0]
        return value


def jaxbench(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The installed ``jaxbench`` command, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        cwd=cwd,
        env=asv_environ(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def make(cwd: Path, target: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    return subprocess.run(
        [
            "make",
            target,
            f"ASV={ASV_BIN}",
            f"JAXBENCH={bin_dir / 'jaxbench'}",
            f"PYTHON={sys.executable}",
            f"MACHINE={MACHINE}",
            *args,
        ],
        cwd=cwd,
        env=asv_environ(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def benchmarks_md_example(root: Path) -> str:
    """The Python example of the written BENCHMARKS.md, as it stands."""
    text = (root / "BENCHMARKS.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, blocks
    return str(blocks[0])


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Adopted:
    repo = make_src_package(
        tmp_path_factory.mktemp("adopt") / "tinyjax", bench_extra=(MATRIX_ONLY,)
    )
    done = jaxbench(repo.root, "init", "--jax", JAX)
    assert done.returncode == 0, done.stdout + done.stderr
    # the package's own suite, as the README's "Adopt jaxbench" section says
    (repo.root / "benchmarks" / "layer.py").write_text(SUITE, encoding="utf-8")
    example = benchmarks_md_example(repo.root)
    (repo.root / "benchmarks" / "mine.py").write_text(example, encoding="utf-8")
    # the main job as init wrote it: asv run, the paired history, publish, regressions
    # (the package's suite only, and short pairs: the tests' budget)
    run = make(
        repo.root,
        "bench",
        "ASV_ARGS=-b ^layer",
        "PAIR_ARGS=-b ^layer --rounds 4 --second-look 0 --per-round 10",
        timeout=RUN_TIMEOUT,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    (repo.root.parent / "make-bench.log").write_text(run.stdout + run.stderr, encoding="utf-8")
    check = make(repo.root, "bench-check", timeout=RUN_TIMEOUT)
    (repo.root.parent / "bench-check.log").write_text(check.stdout + check.stderr, "utf-8")
    assert check.returncode == 0, check.stdout[-6000:] + check.stderr[-3000:]
    return Adopted(repo, done.stdout, run.stdout + run.stderr, check.stdout + check.stderr, example)


def compare(adopted: Adopted, base: int, head: int, *options: str) -> tuple[int, dict[str, Any]]:
    done = jaxbench(
        adopted.root,
        "compare",
        adopted.repo.commits[base][:10],
        adopted.repo.commits[head][:10],
        "--format",
        "json",
        *options,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["benchmark"]: row for row in document["rows"]}


# --- what init wrote, and asv's use of it ----------------------------------------------


def test_init_said_what_it_wrote(adopted: Adopted) -> None:
    out = adopted.init_output
    assert "jaxbench init: tinyjax (src layout, setuptools.build_meta)" in out
    assert "wrote asv.conf.json" in out
    assert "wrote benchmarks/starter.py" in out
    assert "make bench-check" in out
    installed = "installed where jaxbench init ran"
    assert f"{MATRIX_ONLY} {MATRIX_ONLY_VERSION} ({installed}): bench extra" in out
    # importing tinyjax starts no jax backend: every benchmark below was forked
    assert "asv launch method: forkserver (importing tinyjax and benchmarks/" in out
    assert '"launch_method": "forkserver"' in (adopted.root / "asv.conf.json").read_text("utf-8")


def test_make_bench_shows_asv_short_and_keeps_its_whole_output(adopted: Adopted) -> None:
    """asv's steps and one line per commit's benchmarks on the terminal; every result, with
    its table and standard error, in the run's log (jaxbench asv-tee)."""
    out = adopted.asv_output
    shown = out[out.find("make bench: step 1/4") : out.find("make bench: step 2/4")].splitlines()
    (log,) = sorted((adopted.root / ".asv" / "logs").glob("asv-run-*.log"))
    whole = log.read_text(encoding="utf-8").splitlines()
    results = [line for line in whole if asv_line(line).benchmark is not None]
    assert results
    assert not [line for line in shown if asv_line(line).benchmark is not None]
    ended = [line for line in shown if re.search(r" ··· \d+ benchmarks in .*: \d+ ok$", line)]
    assert len(ended) == 3, shown  # three commits, one environment
    total = f"asv run: {len(results)} results (3 commits, 1 environment), none failed"
    assert f"{total}; its whole output: {log.relative_to(adopted.root)}" in shown, shown
    assert len(shown) < 40 < len(whole), shown
    assert not [line for line in shown if line.startswith("asv's last words")], shown


def test_make_bench_ran_the_paired_history_and_preview_exists(adopted: Adopted) -> None:
    out = adopted.asv_output
    assert "jaxbench pair-history --machine" in out
    assert "jaxbench pair-history: 2 pair(s) measured" in out, out[-4000:]
    paired = sorted((adopted.root / "results" / MACHINE / "paired").glob(f"*-{ENV_NAME}*"))
    assert len(paired) == 2, paired
    assert "jaxbench publish" in out
    assert "jaxbench regressions" in out
    # one progress line per step, in order, then the whole job's time by step
    steps = [
        "make bench: step 1/4 asv run, ",
        "make bench: step 2/4 paired history, ",
        "make bench: step 3/4 publish, ",
        "make bench: step 4/4 regressions, ",
        "make bench: done in ",
    ]
    at = [out.find(line) for line in steps]
    assert -1 not in at, (at, out[-4000:])
    assert at == sorted(at), (at, out[-4000:])
    assert "time left unknown (no complete run yet)" in out  # the first run
    done = out[at[-1] :].splitlines()[0]
    for part in ("(asv run ", ", paired history ", ", publish ", ", regressions "):
        assert part in done, done
    preview = subprocess.run(
        ["make", "-n", "preview", f"PYTHON={sys.executable}"],
        cwd=adopted.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert preview.returncode == 0, preview.stderr
    assert "-m http.server --bind 127.0.0.1 --directory html 8080" in preview.stdout


def test_bench_check_runs_the_benchmarks_md_example_and_times_nothing_warm(
    adopted: Adopted,
) -> None:
    assert "from tinyjax" not in adopted.readme_example.replace("#     from tinyjax", "")
    out = adopted.check_output
    assert re.search(r"mine\.MineFigures\.track_max_abs_error\s+ok\s*$", out, re.MULTILINE), out
    assert re.search(r"mine\.Mine\.peakmem_call\s+ok\s*$", out, re.MULTILINE), out
    # a --quick warm time is a first call (compile and check): not printed as one
    assert "time_warm" not in out
    assert "every benchmark but the warm times ran once" in out


def test_asv_built_and_installed_every_commit_with_its_dependencies(adopted: Adopted) -> None:
    for index, commit in enumerate(adopted.repo.commits):
        assert f"commit {commit[:8]}" in adopted.asv_output
        for name in (f"{LAYER}.time_warm", f"{FIGURES}.track_work_flops"):
            value = adopted.value(index, name)
            assert value is not None, (index, name, adopted.asv_output[-4000:])
            assert value > 0
    assert "Found multiple wheels" not in adopted.asv_output
    python = next((adopted.root / ".asv" / "env").glob("*/bin/python"))
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    installed = {p["name"].lower(): p["version"] for p in json.loads(listed.stdout)}
    assert installed["jax"] == JAX
    assert installed[MATRIX_ONLY] == MATRIX_ONLY_VERSION  # from the matrix
    assert installed["tinyjax"] == "0.1.0"
    assert "numpy" in installed
    assert "jaxbench" in installed
    assert "asv" not in installed  # jaxbench's analysing half and its dependencies stay out


def test_the_starter_passes_its_reference_check_in_bench_check(adopted: Adopted) -> None:
    out = adopted.check_output
    for name in (
        "starter.Starter.peakmem_call",
        "starter.StarterFigures.track_max_abs_error",
        "starter.StarterFigures.track_tolerance_used",
        "layer.Layer.peakmem_call",
    ):
        assert re.search(rf"{re.escape(name)}\s+ok\s*$", out, re.MULTILINE), out[-4000:]
    assert not re.search(r"\sfailed\s*$", out, re.MULTILINE), out[-4000:]


def test_the_extra_work_is_in_the_flops(adopted: Adopted) -> None:
    flops = [adopted.value(i, f"{FIGURES}.track_work_flops") for i in range(3)]
    assert flops[1] > 100 * flops[0]  # type: ignore[operator]
    assert flops[2] == flops[1]


# --- jaxbench on the recorded history ----------------------------------------------------


def test_compare_flags_the_commit_that_does_more_work(adopted: Adopted) -> None:
    status, document = compare(adopted, 0, 1)
    assert status == 1
    flops = rows(document)[f"{FIGURES}.track_work_flops"]
    assert flops["verdict"] == "regression"
    assert flops["category"] == "work"


def test_compare_of_the_no_op_commit_flags_nothing(adopted: Adopted) -> None:
    # Warm and compile times of one process per side swing on a busy machine;
    # the exact figures (work, accuracy) and failures decide here.
    status, document = compare(adopted, 1, 2, "--fail-on", "work,accuracy,failed")
    assert status == 0, document["summary"]
    for name, row in rows(document).items():
        if row["category"] in ("work", "accuracy"):
            assert row["verdict"] == "unchanged", (name, row)


def test_regressions_names_the_commit_that_does_more_work(adopted: Adopted) -> None:
    done = jaxbench(adopted.root, "regressions", "--all", "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["regressions"]
    work = {r["benchmark"] for r in found if r["bad_commit"] == adopted.repo.commits[1]}
    assert f"{FIGURES}.track_work_flops" in work
    # c3 changed nothing the compiler sees (its times may drift on a busy machine)
    c3 = adopted.repo.commits[2]
    assert not [r for r in found if r["bad_commit"] == c3 and r["kind"] in ("work", "accuracy")]


def test_ab_takes_7_digit_prefixes_and_finds_asv_s_environment(adopted: Adopted) -> None:
    # c2 and c3 are the same code: asv's environment runs both, each commit in front
    c2, c3 = adopted.repo.commits[1], adopted.repo.commits[2]
    done = jaxbench(
        adopted.root,
        "ab",
        "--base-commit",
        c2[:7],
        "--head-commit",
        c3[:7],
        "-b",
        r"^layer\.Layer\.time_warm$",
        "--rounds",
        "6",
        "--second-look",
        "0",
        "--per-round",
        "20",
        "--machine",
        MACHINE,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"base {c2[:8]} / head {c3[:8]}" in done.stderr
    assert f"{c3[:8]}-{ENV_NAME}.json" in done.stderr  # asv's own result file
    assert f"--env {ENV_NAME}" in done.stderr
    status, document = compare(adopted, 1, 2, "--paired", "20", "--fail-on", "work,failed")
    assert status == 0
    warm = rows(document)[f"{LAYER}.time_warm"]
    assert "paired" in warm["reason"], warm


# --- publish, in a real browser --------------------------------------------------------


@pytest.fixture(scope="module")
def site(adopted: Adopted) -> Iterator[str]:
    done = jaxbench(adopted.root, "publish")
    assert done.returncode == 0, done.stdout + done.stderr
    with served(adopted.root / "html") as url:
        yield url


@pytest.mark.browser
def test_publish_renders_in_headless_chromium(adopted: Adopted, site: str) -> None:
    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install it with 'apt-get install -y chromium'")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    blocked: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()

            def route(request_route: Any) -> None:
                if request_route.request.url.startswith(site):
                    request_route.continue_()
                else:
                    blocked.append(request_route.request.url)
                    request_route.abort()

            tab.route("**/*", route)
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto(site + "index.html", wait_until="networkidle")
            tab.wait_for_selector("#summarygrid-display .benchmark-container")
            boxes = tab.locator("#summarygrid-display .benchmark-container").count()
            assert boxes >= 2
            tab.goto(site + "jaxbench/regressions.html", wait_until="networkidle")
            text = tab.locator("body").inner_text()
            assert adopted.repo.commits[1][:8] in text
            assert "track_work_flops" in text
        finally:
            browser.close()
    assert errors == []
    assert blocked == []


def test_the_written_workflows_pass_actionlint_and_zizmor(adopted: Adopted) -> None:
    workflows = adopted.root / ".github" / "workflows"
    linted = run_actionlint(workflows)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    audited = run_zizmor(workflows)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert json.loads(audited.stdout) == []


def test_pip_resolves_the_jax_a_project_would_get(tmp_path: Path) -> None:
    """Where jax is not installed, init asks pip what the project resolves to."""
    from jaxbench.jobs import init_checks

    root = make_src_package(tmp_path / "tinyjax").root
    served = init_checks.served_versions("jax")
    assert served is not None
    # tinyjax asks for jax>=0.4.30: pip picks the newest the index serves
    assert init_checks.resolve_with_pip(root, "jax") == served[0]


# --- the written review, step by step, on an A/A pull request -----------------------------

_OUTPUT = re.compile(r"\$\{\{\s*steps\.(\w+)\.outputs\.(\w+)\s*\}\}")
#: Steps a GitHub runner does for the job: check out, set up Python, install (done here).
_RUNNER_STEPS = ("Install asv and jaxbench",)


def _read_output(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines())
    return {k: v for k, v in (p for p in pairs if len(p) == 2)}


def run_review_steps(root: Path, base: str, head: str, scratch: Path) -> list[tuple[str, int, str]]:
    """The written pr-bench.yml's run steps, in order, as GitHub runs them (bash -eo pipefail)."""
    from test_workflows import load

    job = load(root / ".github" / "workflows" / "pr-bench.yml")["jobs"]["review"]
    env = {k: str(v) for k, v in job["env"].items() if "${{" not in str(v)}
    env.update(
        {
            "BASE_SHA": base,
            "HEAD_SHA": head,
            "PR_NUMBER": "1",
            "HTML_URL": "",
            # a shorter review than a runner's: the tests' budget (the steps are as written)
            "REVIEW_BUDGET": "1m",
            "GITHUB_ACTIONS": "true",
            "RUNNER_TEMP": str(scratch),
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_RUN_ID": "1",
        }
    )
    outputs: dict[str, dict[str, str]] = {}
    done: list[tuple[str, int, str]] = []
    # the review times base and head side by side: alone while it times, not while asv runs
    with machine_alone.handed_over():
        _run_steps(root, job["steps"], env, outputs, done, scratch)
    return done


def _run_steps(
    root: Path,
    steps: list[dict[str, Any]],
    env: dict[str, str],
    outputs: dict[str, dict[str, str]],
    done: list[tuple[str, int, str]],
    scratch: Path,
) -> None:
    for index, step in enumerate(steps):
        if "run" not in step or step["name"] in _RUNNER_STEPS:
            continue
        if str(step.get("if", "")).strip():
            continue  # upload: GitHub's, not ours
        output = scratch / f"output-{index}"
        output.write_text("", encoding="utf-8")
        step_env = {
            k: _OUTPUT.sub(lambda m: outputs.get(m.group(1), {}).get(m.group(2), ""), str(v))
            for k, v in step.get("env", {}).items()
        }
        script = str(step["run"])
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script],
            cwd=root,
            env={
                **asv_environ(),
                **env,
                **step_env,
                "GITHUB_OUTPUT": str(output),
                "PATH": f"{Path(sys.executable).parent}:{asv_environ().get('PATH', '')}",
            },
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        if "id" in step:
            outputs[str(step["id"])] = _read_output(output)
        done.append((str(step["name"]), proc.returncode, proc.stdout + proc.stderr))
        if proc.returncode != 0:
            break


def test_the_written_review_passes_an_a_a_pull_request_with_a_matrix_only_package(
    adopted: Adopted, tmp_path: Path
) -> None:
    from e2e_repo import git

    base = adopted.repo.commits[2]
    git(adopted.root, "commit", "-q", "--allow-empty", "-m", "A/A: nothing changed")
    head = git(adopted.root, "rev-parse", "HEAD")
    try:
        steps = run_review_steps(adopted.root, base, head, tmp_path)
        report = "\n".join(f"{name}: exit {status}" for name, status, _ in steps)
        (adopted.root.parent / "review.log").write_text(
            "\n".join(f"=== {name}: exit {status}\n{out}" for name, status, out in steps), "utf-8"
        )
        failed = [(name, out[-4000:]) for name, status, out in steps if status != 0]
        written = tmp_path / "review" / "comment.md"
        comment = written.read_text(encoding="utf-8") if written.exists() else "(no comment)"
        assert not failed, report + "\n" + str(failed) + "\n" + comment
        names = [name for name, _, _ in steps]
        assert "Review the pull request (jaxbench review)" in names
        assert names[-1] == "Fail on a regression"
        said = next(out for name, _, out in steps if "jaxbench review" in name)
        assert "layer.Layer.time_warm-0: base median" in said, said[-3000:]
        # the review's steps, each a log group under GitHub Actions
        for number, step in enumerate(("asv run", "first calls", "warm times", "compare"), 1):
            assert f"::group::jaxbench review: step {number}/4 {step}, " in said, step
        assert said.count("::endgroup::") == 4, said[-3000:]
        assert (tmp_path / "review" / "compare-exit-code").read_text().strip() == "0", comment
        assert "could not compare" not in comment, comment
        # the tests' one A/A review: no row changed, the warm times tested pair by pair
        doc = json.loads((adopted.root / ".asv" / "review" / "review.json").read_text("utf-8"))
        assert [r for r in doc["rows"] if r["category"] is not None] == []
        changed = [r for r in doc["rows"] if r["verdict"] not in ("unchanged", "not significant")]
        assert {r["verdict"] for r in changed} <= {"skipped"}, changed
        warm = [r for r in doc["rows"] if r["benchmark"].endswith(".time_warm")]
        assert warm
        assert all("paired t over" in r["reason"] for r in warm), warm
        assert "paired t over" in comment
        # the terminal's summary lists no row, the comment every one
        assert "rows without a change (the comment lists them)" in said, said[-3000:]
        assert "jaxbench review: done in " in said
        # the history is left alone: asv's results of the review went to .asv/review
        assert not (adopted.root / "results" / "gha-pr").exists()
    finally:
        git(adopted.root, "reset", "-q", "--hard", base)
        shutil.rmtree(adopted.root / "results" / "gha-pr", ignore_errors=True)
