"""Short names of asv environments, for titles and tables (``jax0.9.2`` for
``virtualenv-py3.11-jax0.9.2-optax0.2.8``). Pure."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["env_aliases", "envs_compared"]


def env_aliases(env_names: Sequence[str]) -> dict[str, str]:
    """A short name for each environment: the ``-``-separated parts the others lack.

    ``virtualenv-py3.11-jax0.9.2-optax0.2.8`` beside ``...-jax0.10.2-...``
    is ``jax0.9.2``. One environment, or aliases that would not tell them
    apart: ``env1``, ``env2``, ... (one environment: its own name).
    """
    names = sorted(set(env_names))
    if len(names) == 1:
        return {names[0]: names[0]}
    parts = {name: name.split("-") for name in names}
    shared = set.intersection(*(set(p) for p in parts.values()))
    aliases = {name: "-".join(p for p in parts[name] if p not in shared) for name in names}
    short = all(aliases.values()) and len(set(aliases.values())) == len(names)
    if short and max(len(a) for a in aliases.values()) <= 40:
        return aliases
    return {name: f"env{i}" for i, name in enumerate(names, 1)}


def envs_compared(base_env: str, head_env: str) -> tuple[str, str]:
    """The two environments of one commit's comparison, each by what the other lacks
    (``jax0.9.2``, ``jax0.10.2``), or in full where that would not tell them apart."""
    aliases = env_aliases([base_env, head_env])
    short = aliases[base_env], aliases[head_env]
    if short == ("env1", "env2") or short == ("env2", "env1"):
        return base_env, head_env
    return short
