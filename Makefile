# Two entry points for a fresh machine: `make run` (the examples) and `make test` (the suite).
# Each creates .venv and installs what it needs first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: run test lint typecheck unit coverage bench fuzz docs clean redis-server chromium interop

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[examples]"
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@ $(STAMP_RUN)

## The main job: every example, on the offline model unless a provider key is set.
run: $(STAMP_RUN)
	$(BIN)/python examples/run_all.py

## The whole test suite, with lint and type checks.
test: $(STAMP_DEV) lint typecheck unit

lint: $(STAMP_DEV)
	$(BIN)/ruff check alloy tests examples benchmarks
	$(BIN)/ruff format --check alloy tests examples benchmarks

typecheck: $(STAMP_DEV)
	$(BIN)/mypy alloy tests/typing

## The Redis response store's tests start a real redis-server on 127.0.0.1: install it when it
## is missing (Debian/Ubuntu, as root or through sudo); a second run does nothing.
redis-server:
	@command -v redis-server >/dev/null || { \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null 2>&1 || { \
	    $$sudo apt-get update -qq >/dev/null && \
	    $$sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }; }

## alloy serve's playground test drives Debian's chromium with Playwright (never `playwright
## install`, which downloads a browser of its own): install it when it is missing.
chromium:
	@command -v chromium >/dev/null || { \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || { \
	    $$sudo apt-get update -qq >/dev/null && \
	    $$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; }

## pytest in four workers (pytest-xdist: the suite waits on sockets and subprocesses as much as
## it computes, so four keep two cores busy), handed whole files in the order tests/conftest.py
## puts them (order_files: the most tests first, Ray's file midway).
PYTEST_WORKERS ?= 4
PYTEST := -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder
unit: $(STAMP_DEV) redis-server chromium
	$(BIN)/python $(PYTEST)

## The suite again under coverage, with its gate (CI runs it after `make test`; tracing every
## line costs a fifth more CPU, so the everyday command leaves it out). Coverage starts before
## pytest and in every process it starts, so alloy's import-time lines count; the gate covers
## providers/ too, and pytest's own summary line is repeated last.
coverage: $(STAMP_DEV) redis-server chromium
	rm -f .coverage .coverage.*
	$(BIN)/python -m coverage run $(PYTEST) 2>&1 | tee $(VENV)/pytest.log
	$(BIN)/python -m coverage combine -q
	$(BIN)/python -m coverage report --fail-under=90
	@tail -n 1 $(VENV)/pytest.log

## Benchmarks (not part of `make test`): builds the peers' venvs, writes benchmarks/results/report.md and chart.png.
bench: $(STAMP_RUN)
	$(BIN)/python -m benchmarks

## The clients the suite cannot hold, against alloy serve on the emulator (tests/interop): the
## openai npm package and the Vercel AI SDK (node, from `npm ci` into tests/interop/js/node_modules,
## redone only when package-lock.json changes) and instructor (its own virtualenv: it pins an
## older jiter than alloy's openai allows).
INTEROP := tests/interop
INTEROP_VENV := $(INTEROP)/.venv-instructor

$(INTEROP)/js/node_modules/.installed: $(INTEROP)/js/package-lock.json
	cd $(INTEROP)/js && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(INTEROP_VENV)/.installed: $(INTEROP)/instructor-requirements.txt
	$(PYTHON) -m venv $(INTEROP_VENV)
	$(INTEROP_VENV)/bin/python -m pip install -q -r $<
	touch $@

interop: $(STAMP_DEV) $(INTEROP)/js/node_modules/.installed $(INTEROP_VENV)/.installed
	$(BIN)/python -m tests.interop.run --instructor-python $(INTEROP_VENV)/bin/python

## Hostile-input runs at full size (not part of `make test`, which runs them small): reply
## fuzzing through the real SDKs, parser growth checks, and 1,000-loop resource checks; and the
## full provider cross of the matrices (`cross` cells: the clouds sharing an adapter).
fuzz: $(STAMP_DEV)
	$(BIN)/python -m pytest -m fuzz --fuzz-scale=50 --timeout=1800 -q

## The documentation site, built in strict mode into site/.
docs: $(STAMP_DEV)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) .coverage .coverage.* .pytest_cache .mypy_cache .ruff_cache site $(INTEROP)/js/node_modules $(INTEROP_VENV)
