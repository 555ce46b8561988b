"""Golden checks edited in place on the Checks page (query, expected ids, limit), each edit written to the
golden file in the check's place or refused with the reason; Remove says what it removed and Undo (or
Ctrl+Z) puts the checks back where they were."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QSpinBox, QTableView, QWidget
from pytestqt.qtbot import QtBot

from recall_gui.core.golden.golden import GoldenCheck, GoldenFile, read_golden, write_golden
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.models.checks_model import EXPECTED, LIMIT, QUERY, RESULT
from recall_gui.qt.pages.checks.page import ChecksPage
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.test_checks_page import cells, default_golden
from tests.qt.test_search import select_rows


@pytest.fixture
def checks_window(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> tuple[MainWindow, ChecksPage, QTableView]:
    write_golden(
        default_golden(),
        GoldenFile(
            (
                GoldenCheck(kb.name, "capital of France", ("paris",)),
                GoldenCheck(kb.name, "How do I change my password?", ("pw-reset",), 3),
                GoldenCheck(kb.name, "tides", ("tides",)),
            )
        ),
    )
    window = open_window(kb.registry_dir)
    page = window.checks
    window.pages.setCurrentWidget(page)
    run(loop, page.load_file())
    return window, page, page.findChild(QTableView, "checksTable")


def type_in_cell(
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    page: ChecksPage,
    table: QTableView,
    row: int,
    column: int,
    value: object,
) -> None:
    """Open the cell's editor as a double-click does, type ``value`` and press Enter."""
    index = table.model().index(row, column)
    table.setCurrentIndex(index)
    table.edit(index)
    editors = [w for w in table.viewport().findChildren(QWidget) if isinstance(w, QLineEdit | QSpinBox)]
    editor = next(w for w in editors if isinstance(w, QSpinBox)) if column == LIMIT else editors[0]
    if isinstance(editor, QSpinBox):
        editor.setValue(int(value))  # type: ignore[call-overload]
    else:
        editor.setText(str(value))
    with waiting_for(loop, page.editFinished):
        qtbot.keyClick(editor, Qt.Key.Key_Return)


def banner_text(window: MainWindow) -> str:
    return window.banner.findChild(QLabel, "bannerText").text()


def test_a_query_ids_and_limit_typed_in_a_cell_are_written_in_the_checks_place(
    checks_window: tuple[MainWindow, ChecksPage, QTableView], qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window, page, table = checks_window
    name = read_golden(default_golden()).checks[0].db_name
    type_in_cell(qtbot, loop, page, table, 1, QUERY, "How do I reset my password?")
    type_in_cell(qtbot, loop, page, table, 1, EXPECTED, "pw-reset,  pw-rules , pw-reset")
    type_in_cell(qtbot, loop, page, table, 1, LIMIT, 4)
    assert read_golden(default_golden()).checks == (
        GoldenCheck(name, "capital of France", ("paris",)),
        GoldenCheck(name, "How do I reset my password?", ("pw-reset", "pw-rules"), 4),
        GoldenCheck(name, "tides", ("tides",)),
    )
    assert cells(table, QUERY)[1] == "How do I reset my password?"
    assert cells(table, EXPECTED)[1] == "pw-reset, pw-rules"
    assert cells(table, LIMIT)[1] == "4"
    assert cells(table, RESULT) == ["not run"] * 3
    assert window.banner.message is None


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        (EXPECTED, " , ", "The check was not changed: a check must expect at least one id"),
        (LIMIT, 0, "The check was not changed: the limit must be between 1 and 2,147,483,647, not 0"),
        (
            QUERY,
            "tides",
            "The check was not changed: another check already asks this query of this database with this "
            "limit",
        ),
    ],
)
def test_an_edit_the_file_cannot_take_is_refused_saying_why_and_changes_nothing(
    checks_window: tuple[MainWindow, ChecksPage, QTableView],
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    column: int,
    value: object,
    said: str,
) -> None:
    window, page, table = checks_window
    before, shown = default_golden().read_bytes(), cells(table, column)
    type_in_cell(qtbot, loop, page, table, 0, column, value)
    assert banner_text(window) == said
    assert default_golden().read_bytes() == before
    assert cells(table, column) == shown


def test_remove_says_what_it_removed_and_undo_puts_the_checks_back_in_their_places(
    checks_window: tuple[MainWindow, ChecksPage, QTableView], qtbot: QtBot
) -> None:
    _window, page, table = checks_window
    before = default_golden().read_bytes()
    undo = page.findChild(QPushButton, "checksUndoButton")
    assert not undo.isVisibleTo(page)

    select_rows(table, 0, 2)
    page.findChild(QPushButton, "checksRemoveButton").click()
    assert [c.query for c in read_golden(default_golden()).checks] == ["How do I change my password?"]
    assert page.note.message == "Removed 2 checks from golden.json."
    assert undo.isVisibleTo(page)
    undo.click()
    assert default_golden().read_bytes() == before
    assert page.note.message == "Put back 2 checks."
    assert not undo.isVisibleTo(page)

    select_rows(table, 1)
    page.findChild(QPushButton, "checksRemoveButton").click()
    assert page.note.message == "Removed the check “How do I change my password?” from golden.json."
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert default_golden().read_bytes() == before
    assert cells(table, QUERY) == ["capital of France", "How do I change my password?", "tides"]


def test_after_an_edit_the_note_and_the_status_bar_no_longer_say_every_check_passed(
    checks_window: tuple[MainWindow, ChecksPage, QTableView], qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window, page, table = checks_window
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert cells(table, RESULT) == ["✓ passed"] * 3
    assert page.note.message.startswith("Ran 3 checks in ") and page.note.tone == "good"
    assert window.status_activity.text() == "Golden checks: 3 of 3 passed"

    type_in_cell(qtbot, loop, page, table, 1, QUERY, "How do I reset my password?")
    assert cells(table, RESULT) == ["✓ passed", "not run", "✓ passed"]
    assert page.note.message == (
        "The checks changed: 1 not run since the last run; of the 2 that ran as they are now, 2 passed. "
        "Run them again to see where each one stands."
    )
    assert page.note.tone == "warning"
    assert window.status_activity.text() == (
        "Golden checks: 1 not run since the last run; 2 of 2 ran as they are and passed"
    )
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert page.note.message.startswith("Ran 3 checks in ")
    assert window.status_activity.text() == "Golden checks: 3 of 3 passed"
