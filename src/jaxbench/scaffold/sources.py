"""Where the pieces of a benchmark environment come from.

* jaxbench itself: the source the running jaxbench was installed from, read
  from its PEP 610 ``direct_url.json`` (:func:`requirement_from_direct_url`):
  a local directory or file becomes ``jaxbench @ file:///...``, a git
  checkout ``jaxbench @ git+URL@COMMIT``, an archive ``jaxbench @ URL``, and an
  install from the package index (no ``direct_url.json``) ``jaxbench==VERSION``;
* asv and asv_runner: the versions installed here, pinned;
* jax: the version installed here (:func:`installed_version`), else the one
  pip resolves for the project, and the versions the package index serves
  (asked of pip by :mod:`jaxbench.jobs.init_checks`);
* the modules a distribution provides (:func:`import_names`), to tell which
  of the project's optional packages the benchmarks import.

Nothing here imports jax: versions are read from package metadata.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "VERSION",
    "Requirement",
    "import_names",
    "installed_version",
    "jaxbench_requirement",
    "pinned",
    "requirement_from_direct_url",
    "version_key",
]

#: A release version as jax numbers them (PEP 440 release segments, optional suffix).
VERSION = re.compile(r"^\d+(\.\d+){1,3}([a-z]+\d*)?(\.post\d+)?(\.dev\d+)?$")


@dataclass(frozen=True)
class Requirement:
    """A pip requirement and where it came from."""

    #: What ``pip install`` takes, e.g. ``jaxbench @ git+https://...@abc``.
    spec: str
    #: How it was found, for people: "a local directory", "a git checkout" ...
    origin: str
    #: Whether a machine other than this one (a GitHub runner) can install it.
    portable: bool


def requirement_from_direct_url(name: str, version: str, direct_url: Any) -> Requirement:
    """The requirement that installs ``name`` from where a PEP 610 record says it came.

    ``direct_url`` is the parsed ``direct_url.json``, or None for an install
    from the package index.
    """
    if not isinstance(direct_url, dict) or not isinstance(direct_url.get("url"), str):
        return Requirement(f"{name}=={version}", "the package index", True)
    url: str = direct_url["url"]
    subdirectory = direct_url.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if isinstance(subdirectory, str) else ""
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        commit = vcs.get("commit_id")
        at = f"@{commit}" if isinstance(commit, str) and commit else ""
        local = url.startswith("file:")
        origin = "a local git checkout" if local else "a git repository"
        return Requirement(f"{name} @ git+{url}{at}{fragment}", origin, not local)
    if url.startswith("file:"):
        kind = "a local directory" if "dir_info" in direct_url else "a local file"
        return Requirement(f"{name} @ {url}{fragment}", kind, False)
    return Requirement(f"{name} @ {url}{fragment}", "an archive URL", True)


def jaxbench_requirement() -> Requirement:
    """Where the running jaxbench was installed from."""
    dist = importlib.metadata.distribution("jaxbench")
    text = dist.read_text("direct_url.json")
    try:
        record = json.loads(text) if text else None
    except ValueError:
        record = None
    return requirement_from_direct_url("jaxbench", dist.version, record)


def installed_version(name: str) -> str | None:
    """The version of ``name`` installed in this environment, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


#: Distributions whose module is named otherwise, for one that is not installed here.
_MODULE_OF = {
    "dm_haiku": "haiku",
    "dm_tree": "tree",
    "orbax_checkpoint": "orbax",
    "pyyaml": "yaml",
    "scikit_learn": "sklearn",
    "pillow": "PIL",
}


@functools.cache
def _installed_modules() -> dict[str, frozenset[str]]:
    """Normalised distribution name -> the top-level modules it installs here."""
    found: dict[str, set[str]] = {}
    for module, dists in importlib.metadata.packages_distributions().items():
        for dist in dists:
            found.setdefault(_normalise(dist), set()).add(module)
    return {dist: frozenset(modules) for dist, modules in found.items()}


def import_names(name: str) -> frozenset[str]:
    """The top-level modules the distribution ``name`` provides: from its metadata
    where it is installed here, else its name as a module (``dm-haiku``: ``haiku``)."""
    key = _normalise(name)
    modules = _installed_modules().get(key)
    if modules:
        return modules
    return frozenset({_MODULE_OF.get(key, key)})


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def pinned(name: str) -> str:
    """``name==VERSION`` as installed here, or just ``name`` when it is not."""
    version = installed_version(name)
    return f"{name}=={version}" if version else name


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a release version: its leading numbers."""
    numbers = re.match(r"^[\d.]+", version)
    parts = (numbers.group(0) if numbers else "0").strip(".").split(".")
    return tuple(int(p) for p in parts if p)
