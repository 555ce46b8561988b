"""The Where filter in the window: the process that checks a new filter is started while the user types
it, and a filter that keeps no row says so (and how many rows the table has), searched or browsed; so
does `recall-gui search`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTableView

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.panels.results_panel import HINT_NO_FILTERED_ROWS, HINT_NO_RESULTS
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, until, waiting_for
from tests.waiting import spawned_children

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

NO_MATCH = "id = 'nowhere'"


def test_typing_a_filter_starts_its_checker_before_enter_which_then_uses_it(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, window.operations.wait_idle())
    before = spawned_children()
    edit = window.knowledge.filter_bar.where_edit
    QTest.keyClicks(edit, "id = 'paris'")
    run(loop, until(lambda: bool(spawned_children() - before), "the filter's worker started while typing"))
    started = spawned_children() - before
    with waiting_for(loop, window.knowledge.browseReady):
        QTest.keyClick(edit, Qt.Key.Key_Return)
    browse = window.findChild(QTableView, "browseTable")
    assert browse.model().rowCount() == 1
    assert spawned_children() - before == started  # Enter found it running: no second one


def test_a_filter_that_keeps_no_row_says_so_with_the_tables_size_searched_and_browsed(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    page = window.knowledge
    page.filter_bar.where_edit.setText(NO_MATCH)
    with waiting_for(loop, page.browseReady):
        QTest.keyClick(page.filter_bar.where_edit, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())
    expected = f"No row matches the filter “{NO_MATCH}” ({kb.name} has {len(kb.ids)} rows)."
    assert page.results.browse_table.placeholder() == expected
    page.query_bar.query_edit.setText("capital of France")
    with waiting_for(loop, page.searchFinished):
        QTest.keyClick(page.query_bar.query_edit, Qt.Key.Key_Return)
    assert page.results.results_model.rowCount() == 0
    assert page.results.results_table.placeholder() == expected


def test_when_why_it_is_empty_cannot_be_said_the_empty_answer_still_shows_as_one(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, window.operations.wait_idle())

    async def cannot_say(*_args: Any) -> str:
        raise RecallError("the table could not be counted")

    monkeypatch.setattr(core.tables, "why_empty", cannot_say)
    page = window.knowledge
    page.filter_bar.where_edit.setText(NO_MATCH)
    with waiting_for(loop, page.browseReady):
        QTest.keyClick(page.filter_bar.where_edit, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())
    assert page.results.browse_table.placeholder() == HINT_NO_FILTERED_ROWS
    page.query_bar.query_edit.setText("capital of France")
    with waiting_for(loop, page.searchFinished):
        QTest.keyClick(page.query_bar.query_edit, Qt.Key.Key_Return)
    assert page.results.results_model.rowCount() == 0
    assert page.results.results_table.placeholder() == HINT_NO_RESULTS
    assert page.results.caption.text().startswith("0 results for “capital of France”")
    assert not window.banner.isVisible()


def test_the_cli_says_why_an_answer_is_empty_on_stderr_and_prints_the_agents_json(kb: KnowledgeBase) -> None:
    registry = ("--registry", str(kb.registry_dir), "--db", kb.name)
    filtered = cli("search", *registry, "--where", NO_MATCH, "capital of France")
    assert filtered.returncode == 0, filtered.stderr
    assert filtered.stdout == '{"query":"capital of France","results":[]}\n'
    assert (
        filtered.stderr
        == f"note: No row matches the filter “{NO_MATCH}” ({kb.name} has {len(kb.ids)} rows).\n"
    )
    nothing_asked = cli("search", *registry, "--limit", "0", "capital of France")
    assert nothing_asked.stderr == "note: No results: the limit is 0.\n"
    found = cli("search", *registry, "--where", "id = 'paris'", "capital of France")
    assert '"id":"paris"' in found.stdout and found.stderr == ""


def test_the_cli_prints_the_empty_answer_when_why_it_is_empty_cannot_be_said(
    kb: KnowledgeBase, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.cli import main

    async def cannot_say(*_args: Any) -> str:
        raise RecallError("the table could not be counted")

    monkeypatch.setattr(core.tables, "why_empty", cannot_say)
    code = main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, "--where", NO_MATCH, "tides"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, '{"query":"tides","results":[]}\n', "note: No results.\n")
