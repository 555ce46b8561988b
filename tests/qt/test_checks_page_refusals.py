"""The window's side of the checks' and exports' refusals (their core and command-line sides are in
tests/core): a comparison side that could not run, a golden file's unusable number, and output paths that
must not be written, each said in the window and nothing written."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from tests.core.test_check_versions_and_compare import FRANCE, golden
from tests.core.test_golden_numbers import CASES, golden_text
from tests.core.test_output_paths import state, window_places
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import run


def test_the_checks_page_shows_a_side_that_could_not_run_as_such(
    kb: KnowledgeBase,
    open_window: Any,
    loop: Any,
    tmp_path: Path,
) -> None:
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    page = open_window(kb.registry_dir).checks
    assert page.open_file(path)
    assert run(loop, page.compare(version=7))
    view = page.compare_view
    assert view.note.text().splitlines()[-1].startswith("Check 1: A could not run it: ")
    assert [view.table.item(0, column).text() for column in (1, 2, 3)] == ["could not run", "pass", ""]
    assert "version 7" in view.table.item(0, 1).toolTip().lower()


def test_the_checks_page_refuses_the_file_naming_the_field(
    kb: KnowledgeBase,
    open_window: Any,
    tmp_path: Path,
) -> None:
    window = open_window(kb.registry_dir)
    for number, (field, said) in enumerate(CASES[:2]):
        bad = tmp_path / f"bad{number}.json"
        bad.write_text(golden_text(kb.name, field), encoding="utf-8")
        assert not window.checks.open_file(bad)
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"{bad}, line 2, check 1, {said}")


@pytest.mark.parametrize("browsing", [False, True])
def test_the_window_refuses_to_export_there(
    kb: KnowledgeBase,
    open_window: Any,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    browsing: bool,
) -> None:
    window = open_window(kb.registry_dir)
    inputs = window.knowledge.read_inputs()
    if browsing:
        run(loop, window.knowledge.browser.browse(inputs))
    else:
        window.knowledge.query_bar.query_edit.setText("capital of France")
        run(loop, window.knowledge.searching.search(window.knowledge.read_inputs()))
    for name, (out, said) in window_places(kb, tmp_path).items():
        before = state(out)
        assert run(loop, window.knowledge.exporter.export_to(out, "csv")) == 0, name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"The export was not written to {out}: {said}"), (name, banner)
        assert state(out) == before, name


def test_the_checks_page_refuses_to_save_the_golden_file_there(
    kb: KnowledgeBase,
    open_window: Callable[..., Any],
    tmp_path: Path,
) -> None:
    window = open_window(kb.registry_dir)
    for name, (out, said) in window_places(kb, tmp_path).items():
        before = state(out)
        assert not window.checks.save_as(out), name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"{out}: not written: {said}"), (name, banner)
        assert state(out) == before, name
