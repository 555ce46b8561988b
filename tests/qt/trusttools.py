"""Helpers for the window's trust tests: the core's answer for comparison, what the banner says, pasting,
and a 10 ms timer that measures how long the GUI thread was kept from running."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QTableView, QWidget
from pytestqt.qtbot import QtBot

from recall_gui.core.search.harness import Harness
from recall_gui.qt.main_window import MainWindow
from tests.qt.conftest import run


def core_ids(
    loop: asyncio.AbstractEventLoop, registry_dir: Path, db_name: str, query: str, limit: int = 5
) -> list[str]:
    """The ids the core returns for the same database, query and limit (searched as the window does)."""

    async def go() -> list[str]:
        harness = Harness(registry_dir)
        try:
            entry = harness.registry.get(db_name)
            assert entry is not None, db_name
            report = await harness.search_database(entry, query, limit)
        finally:
            await harness.aclose()
        return [hit.id for hit in report.result.hits]

    ids: list[str] = run(loop, go())
    return ids


def column(table: QTableView, number: int) -> list[str]:
    model = table.model()
    return [model.index(row, number).data() for row in range(model.rowCount())]


def banner(window: MainWindow) -> tuple[str, str]:
    """What the banner says (text, hint); empty strings when it is hidden."""
    if not window.banner.isVisible():
        return "", ""
    return (
        window.banner.findChild(QLabel, "bannerText").text(),
        window.banner.findChild(QLabel, "bannerHint").text(),
    )


def paste(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    """Replace the box's text by pasting ``text`` with Ctrl+A, Ctrl+V, as a user does."""
    QGuiApplication.clipboard().setText(text)
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def type_text(widget: QWidget, text: str) -> None:
    """Type ``text`` one key event per character, the way a keyboard layout or an input method delivers
    letters that have no key code of their own (QTest.keyClicks aborts on characters beyond Latin-1)."""
    for char in text:
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            event = QKeyEvent(kind, Qt.Key.Key_unknown, Qt.KeyboardModifier.NoModifier, char)
            QApplication.sendEvent(widget, event)


class StallMeter:
    """A 10 ms timer on the GUI thread; :attr:`longest` is the longest gap between two of its ticks, i.e.
    the longest time the window could not have reacted to a key press or repainted."""

    INTERVAL_MS = 10

    def __init__(self) -> None:
        self._timer = QTimer()
        self._timer.setInterval(self.INTERVAL_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0
        self.longest = 0.0
        self.ticks = 0

    def _tick(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self._last)
        self._last = now
        self.ticks += 1

    def __enter__(self) -> StallMeter:
        self._last = time.monotonic()
        self.longest, self.ticks = 0.0, 0
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.stop()
        self.longest = max(self.longest, time.monotonic() - self._last)


def table_names(table: QTableView) -> list[str]:
    """The Database column of the description page's table, top to bottom."""
    model = table.model()
    return [model.index(row, 1).data() for row in range(model.rowCount())]


def check_state(table: QTableView, row: int) -> Qt.CheckState:
    """The Active box of ``row``, as the view draws it."""
    return Qt.CheckState(table.model().index(row, 0).data(Qt.ItemDataRole.CheckStateRole))


def set_checked(table: QTableView, row: int, state: Qt.CheckState) -> None:
    """Tick or untick the Active box of ``row``, as a click on it does."""
    table.model().setData(table.model().index(row, 0), state.value, Qt.ItemDataRole.CheckStateRole)


def focus_cell(table: QTableView, row: int, column: int) -> None:
    table.setFocus()
    table.setCurrentIndex(table.model().index(row, column))
