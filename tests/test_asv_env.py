"""store.asv_env: asv's environments of a configuration, as asv itself names them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jaxbench.store.asv_env import asv_envs, built_env

# asv asks an "existing" environment's Python for its version with
# subprocess.Popen(preexec_fn=...), which runs Python's at-fork hooks. In a
# pytest worker where an earlier test module started jax's backend, jax's hook
# warns that fork and threads can deadlock; the child execs at once, so the
# warning does not apply, and which worker ran which module before is chance.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")


def test_an_existing_environment_is_the_interpreter_it_names(tmp_path: Path) -> None:
    # environment_type "existing" (asv run --python=same): asv builds nothing, so the
    # environment's Python is that interpreter, not a missing <env_dir>/<name>/bin/python.
    conf = {"version": 1, "project": "p", "repo": ".", "environment_type": "existing",
            "pythons": [sys.executable], "env_dir": "env"}  # fmt: skip
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps(conf))
    (env,) = asv_envs(config)
    assert env.name.startswith("existing-")
    assert Path(env.python).resolve() == Path(sys.executable).resolve()
    assert built_env(config, env.name) == env


def test_a_virtualenv_not_yet_built_has_no_python(tmp_path: Path) -> None:
    conf = {"version": 1, "project": "p", "repo": ".", "environment_type": "virtualenv",
            "pythons": ["3.11"], "env_dir": "env"}  # fmt: skip
    config = tmp_path / "asv.conf.json"
    config.write_text(json.dumps(conf))
    (env,) = asv_envs(config)
    assert env.python == ""
