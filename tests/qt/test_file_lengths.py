"""Every module of the window stays short enough to read as one job: at most 700 lines."""

from __future__ import annotations

from pathlib import Path

import recall_gui.qt

MAX_LINES = 700


def test_no_window_module_is_longer_than_700_lines() -> None:
    root = Path(recall_gui.qt.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 10  # the window's modules were found, not an empty folder
    too_long = {
        str(path.relative_to(root)): count
        for path in modules
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}, f"split these into parts with one job each (lines per file): {too_long}"
