# relore: every command a contributor, CI or a newcomer runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SQL    := models macros data-tests snapshots

.PHONY: install lint format test demo clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/sqlfluff lint $(SQL)
	$(BIN)/hadolint deploy/Dockerfile

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/sqlfluff fix $(SQL)

# Lint first, then pytest last so the run ends on pytest's summary line.
test: lint
	$(BIN)/python -m pytest

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash deploy/local/demo.sh

clean:
	-PATH="$(CURDIR)/$(BIN):$$PATH" relored db stop
	rm -rf .relore target logs build *.egg-info
