#!/usr/bin/env bash
# The accelerator check in one go (at most 8 minutes): the corpus, the report, one A/A
# and one planted `jaxbench ab` pair; prints one table. See bench/device_check.py.
#   bash bench/device_check.sh            # on the device machine (jax with its GPU plugin)
#   bash bench/device_check.sh --dry-run  # the same on the CPU, tiny sizes
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
exec timeout 480 "$PY" bench/device_check.py "$@"
