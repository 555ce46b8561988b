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

PY_DIRS := $(wildcard recall_gui tests bench packaging)

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

# The desktop build (packaging/): `make package` builds dist/recall-gui/ with PyInstaller; `make package-smoke`
# builds it and runs the built program headless through demo, search, list, tool, mcp, the window and
# install.sh.
PACKAGE_STAMP := $(VENV)/.installed-package

$(PACKAGE_STAMP): pyproject.toml $(APP_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[package]"
	touch $@

.PHONY: package package-smoke

package: $(PACKAGE_STAMP)
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
		packaging/recall-gui.spec

package-smoke: package
	$(BIN)/python packaging/smoke.py dist/recall-gui/recall-gui
