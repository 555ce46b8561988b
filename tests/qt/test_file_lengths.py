"""Every module of the app stays short enough to read as one job: at most 600 lines, and a part of a page
split into parts at most 400. A longer one is split by its jobs into parts (docs/ARCHITECTURE.md), never
trimmed to fit."""

from __future__ import annotations

from pathlib import Path

import recall_gui

MAX_LINES = 600
MAX_PART_LINES = 400


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_of_the_app_is_longer_than_600_lines() -> None:
    root = Path(recall_gui.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 200  # the app's modules were found, the core's and the window's
    assert any(path.parts[-3:] == ("qt", "pages", "__init__.py") for path in modules)
    too_long = {
        str(path.relative_to(root)): count for path in modules if (count := lines_of(path)) > MAX_LINES
    }
    assert too_long == {}, f"split these into parts with one job each (lines per file): {too_long}"


def test_no_part_of_a_split_page_is_longer_than_400_lines() -> None:
    pages = Path(recall_gui.__file__).parent / "qt" / "pages"
    # A page is a package pages/<subject>/ built by its page.py; it is split when it has other modules.
    split = [
        folder
        for folder in sorted(pages.iterdir())
        if (folder / "page.py").is_file()
        and {p.name for p in folder.glob("*.py")} - {"__init__.py", "page.py"}
    ]
    assert {"knowledge", "checks", "description", "log", "map"} <= {folder.name for folder in split}
    too_long = {
        f"{folder.name}/{path.name}": count
        for folder in split
        for path in sorted(folder.glob("*.py"))
        if (count := lines_of(path)) > MAX_PART_LINES
    }
    assert too_long == {}, f"split these parts further by their jobs (lines per file): {too_long}"


def test_every_page_is_a_package_built_by_its_page_module() -> None:
    pages = Path(recall_gui.__file__).parent / "qt" / "pages"
    loose = sorted(path.name for path in pages.glob("*.py") if path.name != "__init__.py")
    packages = sorted(folder.name for folder in pages.iterdir() if (folder / "__init__.py").is_file())
    assert loose == []  # what is not a page lives elsewhere (qt/actions, qt/scope, qt/dialogs)
    assert len(packages) >= 10 and all((pages / name / "page.py").is_file() for name in packages)
