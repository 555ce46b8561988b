"""Every module of the app stays short enough to read as one job: at most 600 lines. A longer one is split
by its jobs into parts (docs/ARCHITECTURE.md), never trimmed to fit."""

from __future__ import annotations

from pathlib import Path

import recall_gui

MAX_LINES = 600


def test_no_module_of_the_app_is_longer_than_600_lines() -> None:
    root = Path(recall_gui.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 200  # the app's modules were found, the core's and the window's
    assert any(path.parts[-3:] == ("qt", "pages", "__init__.py") for path in modules)
    too_long = {
        str(path.relative_to(root)): count
        for path in modules
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}, f"split these into parts with one job each (lines per file): {too_long}"
