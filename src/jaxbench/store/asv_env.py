"""asv's environments of an ``asv.conf.json``: their names, Pythons, build caches, variables.

:func:`asv_envs` lists every environment of the matrix as asv itself names
them (asv's own ``get_environments``), with where asv built it; an
environment ``asv run`` has not built yet has an empty ``python``; an
``existing`` one (``environment_type: existing``, ``--python=same``) is the
interpreter it names.
:func:`built_env` picks the one a command works in (``--env NAME``, or the
only one that is built). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from jaxbench.errors import UsageError

__all__ = ["AsvEnv", "asv_envs", "built_env", "review_env"]


@dataclass(frozen=True)
class AsvEnv:
    """One environment of asv's matrix."""

    #: asv's name, e.g. ``virtualenv-py3.11-jax0.10.2`` (the result files' suffix).
    name: str
    #: Its Python, where ``asv run`` built it; "" when it is not built.
    python: str
    #: asv's build cache of this environment (one folder of wheels per commit).
    cache: Path | None
    #: The matrix's environment variables (e.g. XLA_FLAGS), as asv sets them for benchmarks.
    env_vars: tuple[tuple[str, str], ...] = ()
    #: The matrix's packages of this entry (name, version; "" for unpinned).
    requirements: tuple[tuple[str, str], ...] = ()


def asv_envs(config: Path) -> list[AsvEnv]:
    """Every environment of ``config``'s matrix, in asv's order."""
    from asv import util
    from asv.config import Config
    from asv.environment import get_environments

    try:
        conf = Config.load(str(config))
        envs = list(get_environments(conf, [], verbose=False))
    except (OSError, util.UserError) as exc:
        raise UsageError(f"{config}: {exc}; fix asv's configuration") from None
    found = []
    for env in envs:
        root = config.resolve().parent / conf.env_dir / env.dir_name
        env_vars = tuple(sorted((str(k), str(v)) for k, v in env.env_vars.items()))
        requirements = tuple(sorted((str(k), str(v or "")) for k, v in env.requirements.items()))
        python = root / "bin" / "python"
        if env.tool_name == "existing":  # asv runs that interpreter itself: nothing to build
            python = Path(env.python)
        built = python.is_file()
        found.append(
            AsvEnv(
                env.name,
                str(python) if built else "",
                root / "asv-build-cache" if built else None,
                env_vars,
                requirements,
            )
        )
    return found


def _jax_version(env: AsvEnv) -> Version | None:
    """The matrix's jax of ``env``; None where the matrix names none. Unpinned
    (``""``: asv installs the newest) or not a version: newer than any pinned."""
    version = dict(env.requirements).get("jax")
    if version is None:
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return Version("999999")


def review_env(envs: Sequence[AsvEnv], config: Path) -> AsvEnv:
    """The environment a pull-request review measures: the matrix entry of the newest jax.

    Where several entries share it (other packages or variables), or the matrix
    names no jax, the only environment, else a one-line error asking for ``--env``.
    """
    if len(envs) == 1:
        return envs[0]
    versions = [v for v in (_jax_version(e) for e in envs) if v is not None]
    newest = [e for e in envs if versions and _jax_version(e) == max(versions)]
    if len(newest) == 1:
        return newest[0]
    names = ", ".join(e.name for e in (newest or envs)) or "none"
    raise UsageError(
        f"{config}: {len(newest or envs)} asv environments could be reviewed ({names}); "
        "pick one with --env"
    )


def built_env(config: Path, name: str | None) -> AsvEnv:
    """The built environment named ``name``, or the only built one when ``name`` is None."""
    envs = asv_envs(config)
    if name is not None:
        env = next((e for e in envs if e.name == name), None)
        if env is None:
            known = ", ".join(e.name for e in envs) or "none"
            raise UsageError(
                f"no asv environment named {name!r} in {config} (it has: {known}); "
                "give --env one of those"
            )
        if not env.python:
            raise UsageError(
                f"asv environment {name} is not built; run 'asv run' in it first "
                "(make bench, or asv run -E ENV)"
            )
        return env
    built = [e for e in envs if e.python]
    if len(built) == 1:
        return built[0]
    if not built:
        raise UsageError(
            f"no environment of {config} is built; run 'asv run' first (make bench), "
            "or give --base-python and --head-python"
        )
    names = ", ".join(e.name for e in built)
    raise UsageError(f"{len(built)} asv environments are built ({names}); pick one with --env")
