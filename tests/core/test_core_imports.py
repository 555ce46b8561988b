"""The core is Qt-free and cheap to import: checked in a fresh interpreter, where nothing else loaded Qt."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.probes import run_probe

ROOT = Path(__file__).resolve().parents[2]

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
