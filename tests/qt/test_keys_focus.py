"""The keyboard lands where the user can act: a page opened by its shortcut gives the focus to its main
action (Enter or Space runs it), and the results are one key away from the query (F6, or Down)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from recall_gui.qt.help_menu import SHORTCUTS
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, waiting_for


def open_page(window: MainWindow, shortcut: str) -> QWidget:
    """Open a page by its shortcut; what has the keyboard then."""
    next(a for a in window.menus.page_actions if a.shortcut() == QKeySequence(shortcut)).trigger()
    focused = window.focusWidget()
    assert focused is not None
    return focused


def test_a_page_opened_by_its_shortcut_focuses_its_main_action_and_enter_or_space_runs_it(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.activateWindow()
    run(loop, window.operations.wait_idle())
    health = window.health
    focused = open_page(window, "Ctrl+9")
    assert focused is health.check_button
    with waiting_for(loop, health.reportFinished):
        QTest.keyClick(focused, Qt.Key.Key_Return)
    assert health.note.message == f"{kb.name} is healthy: nothing to list."

    reach = window.reach
    focused = open_page(window, "Ctrl+0")
    assert focused is reach.run_button
    with waiting_for(loop, reach.reportFinished):
        QTest.keyClick(focused, Qt.Key.Key_Space)
    assert reach.report is not None and reach.report.db_name == kb.name

    duplicates = window.duplicates
    focused = open_page(window, "Ctrl+6")
    assert focused is duplicates.find_button
    with waiting_for(loop, duplicates.searchFinished):
        QTest.keyClick(focused, Qt.Key.Key_Enter)
    assert duplicates.report is not None

    assert open_page(window, "Ctrl+1").objectName() == "queryEdit"
    assert (
        open_page(window, "Ctrl+5").objectName() == "checksRunButton"
        or not window.checks.run_button.isEnabled()
    )
    for shortcut in ("Ctrl+2", "Ctrl+3", "Ctrl+4", "Ctrl+7", "Ctrl+8"):
        page = window.pages.currentWidget()
        focused = open_page(window, shortcut)
        assert window.pages.currentWidget() is not page
        assert window.pages.currentWidget().isAncestorOf(focused), shortcut  # never left on a hidden page


def test_ctrl_r_or_down_in_the_query_takes_the_keyboard_to_the_results(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    run(loop, knowledge.searching.search(Inputs("capital of France", 5)))
    table = knowledge.results.results_table
    query = knowledge.query_bar.query_edit
    window.menus.focus_query_action.trigger()
    assert window.focusWidget() is query
    QTest.keyClick(query, Qt.Key.Key_Down)
    assert window.focusWidget() is table and table.currentIndex().row() == 0
    QTest.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == 1
    assert knowledge.query_bar.limit_spin.value() == 5  # no spinner took the arrow keys

    window.pages.setCurrentWidget(window.checks)
    window.menus.focus_results_action.trigger()
    assert window.menus.focus_results_action.shortcut() == QKeySequence("F6")
    assert window.pages.currentWidget() is knowledge and window.focusWidget() is table
    assert table.currentIndex().row() == 1  # where the user was
    assert any("F6" in keys and "results" in what for keys, what in SHORTCUTS)  # listed under F1
