#!/usr/bin/env bash
# Regenerates this folder's results/ and asv-run.log with the real asv (0.6.x)
# in a virtualenv environment: 4 commits of a tiny project, the third one's
# build fails, the fourth one's package raises at import (see PROVENANCE.md).
# Usage: tests/data/asv-build-failure/make.sh WORKDIR   (needs git, asv, network for pip)
set -euo pipefail
work=$1
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/repo/benchmarks" "$work/repo/proj" "$work/home"
cd "$work/repo"
cat > benchmarks/bench.py <<'PY'
import proj


def time_a():
    pass


class S:
    params = [1, 2]

    def time_b(self, n):
        pass
PY
touch benchmarks/__init__.py proj/__init__.py
cat > pyproject.toml <<'TOML'
[project]
name = "proj"
version = "0.1"
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"
TOML
cat > asv.conf.json <<'JSON'
{"version": 1, "project": "proj", "repo": ".", "branches": ["main"], "environment_type": "virtualenv",
 "benchmark_dir": "benchmarks", "results_dir": "results", "html_dir": "html", "pythons": ["3.11"],
 "build_command": ["python -c \"import os, sys; os.path.exists('BROKEN') and sys.exit('error: Microsoft Visual C++ 14.0 or greater is required')\"",
                   "python -m pip wheel --no-deps --no-build-isolation -w {build_cache_dir} {build_dir}"]}
JSON
g() { git -c user.email=a@b -c user.name=a "$@"; }
commit() { GIT_COMMITTER_DATE="$1" g commit -q --date "$1" -m "$2"; }
git init -q -b main && git add -A && commit 2026-01-01T00:00:00Z c1
echo x > README && git add -A && commit 2026-01-02T00:00:00Z c2
echo broken > BROKEN && git add -A && commit 2026-01-03T00:00:00Z "c3: the build fails"
git rm -q BROKEN
echo 'raise ImportError("cannot import name _core from partially initialized module proj")' > proj/__init__.py
git add -A && commit 2026-01-04T00:00:00Z "c4: the package fails to import"
git log --format=%H > ../hashes
export HOME="$work/home"
asv machine --yes --machine m1 > /dev/null
asv run --show-stderr --machine m1 HASHFILE:../hashes > ../asv-run.log 2>&1 || test $? -eq 2
rm -rf "$here/results" && cp -r results "$here/results" && cp ../asv-run.log "$here/asv-run.log"
