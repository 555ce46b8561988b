# recall-gui: `make run` opens the app, `make test` runs every check. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
APP_STAMP := $(VENV)/.installed-app
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint typecheck unit install clean

$(APP_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml $(APP_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

install: $(APP_STAMP)

run: $(APP_STAMP)
	$(BIN)/recall-gui

PY_DIRS := $(wildcard recall_gui tests bench)

lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check $(PY_DIRS)
	$(BIN)/python -m ruff format --check $(PY_DIRS)
	$(BIN)/lint-imports

typecheck: $(TEST_STAMP)
	$(BIN)/python -m mypy

unit: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Speed and scale: builds its data under bench/data/ (cached), prints a table, writes bench/results.json.
.PHONY: bench
bench: $(TEST_STAMP)
	$(BIN)/python -m bench
