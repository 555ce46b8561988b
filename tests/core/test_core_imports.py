"""The core is Qt-free and cheap to import: checked in a fresh interpreter, where nothing else loaded Qt.
Its tests are Qt-free too: `make test-core` runs them where Qt is not installed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.probes import run_probe

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: What tests/core and the helpers it imports must not import: Qt, its event loop, its test plugin, the
#: window's tests and the window itself.
WINDOW_ONLY = ("PySide6", "shiboken6", "qasync", "pytestqt", "pyqtgraph", "tests.qt", "recall_gui.qt")

PROBE = """
import json, sys
import recall_gui.core
from recall_gui.core.base.types import RecallEntry, RecallOutput, RecallSearchInput
from recall_gui.core.base.tool import Recall
from recall_gui.core import drafts
from recall_gui.core.registry import registry
from recall_gui.core.registry import suffix
from recall_gui.core.base import paths
from recall_gui.core.base import errors
from recall_gui.core.storage import columns
from recall_gui.core.base import captions
from recall_gui.core.registry import suffix_store
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(code: str) -> set[str]:
    return set(run_probe(code, timeout=60))


def test_importing_the_core_loads_no_qt_module() -> None:
    modules = loaded_modules(PROBE)
    assert "recall_gui.core.registry.registry" in modules  # the probe really imported the core
    qt = sorted(m for m in modules if m.split(".")[0] in ("PySide6", "shiboken6", "qasync", "PyQt5", "PyQt6"))
    assert qt == []
    assert not any(m.startswith("recall_gui.qt") for m in modules)


def test_importing_the_core_defers_heavy_libraries() -> None:
    modules = loaded_modules(PROBE)
    heavy = {"lancedb", "fastembed", "onnxruntime", "pyarrow", "numpy", "httpx", "tokenizers"}
    assert sorted(heavy & {m.split(".")[0] for m in modules}) == []


def test_a_full_core_search_path_still_loads_no_qt_module() -> None:
    code = PROBE.replace(
        "print(",
        "import recall_gui.core.search.harness, recall_gui.core.tables.browse\n"
        "import recall_gui.core.search.health\nprint(",
        1,
    )
    modules = loaded_modules(code)
    assert {"recall_gui.core.search.nearest", "numpy"} <= modules
    assert not any(m.split(".")[0] in ("PySide6", "shiboken6", "qasync") for m in modules)


def test_only_the_ray_part_imports_ray() -> None:
    """The scale extra (Ray, lance-ray) is needed by one part only: no other module of the app imports it."""
    importers: set[str] = set()
    for path in sorted((ROOT / "recall_gui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                if name.split(".")[0] in ("ray", "lance_ray"):
                    importers.add(path.parent.relative_to(ROOT).as_posix())
    assert "recall_gui/core/ray" in importers  # the walk really found Ray's imports
    assert sorted(importers) == ["recall_gui/core/ray"]


def imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def window_imports_of_core_tests() -> dict[str, list[str]]:
    """For each module of tests/core, and each tests/ helper reached from one, what it imports of
    :data:`WINDOW_ONLY`."""
    found: dict[str, list[str]] = {}
    pending = sorted((TESTS / "core").glob("*.py"))
    seen: set[Path] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        names = imported_names(path)
        bad = sorted(n for n in names if any(n == w or n.startswith(w + ".") for w in WINDOW_ONLY))
        if bad:
            found[str(path.relative_to(TESTS.parent))] = bad
        for name in names:
            helper = TESTS.parent / (name.replace(".", "/") + ".py")
            if name.startswith("tests.") and helper.exists():
                pending.append(helper)
    return found


def test_the_core_tests_import_nothing_of_the_window() -> None:
    assert window_imports_of_core_tests() == {}


def test_the_scan_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from PySide6.QtWidgets import QLabel\n    import tests.qt.conftest\n")
    assert imported_names(module) == {"PySide6.QtWidgets", "tests.qt.conftest"}
