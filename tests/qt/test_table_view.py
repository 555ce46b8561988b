"""The tables' view: rows appended below a full viewport update the scroll bar without a repaint, and
every other change still repaints (checked by counting the view's paint events)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QPaintEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from recall_gui.qt.widgets import PlaceholderTableView


def settle() -> None:
    """Deliver every event already posted (layouts, update requests): a repaint asked for happens here."""
    for _ in range(3):
        QCoreApplication.sendPostedEvents()
        QApplication.processEvents()


class CountingView(PlaceholderTableView):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        super().paintEvent(event)


def rows(model: QStandardItemModel, count: int) -> None:
    start = model.rowCount()
    for row in range(start, start + count):
        model.appendRow([QStandardItem(f"id-{row}"), QStandardItem(f"content {row}")])


def shown_table(qtbot: QtBot, row_count: int) -> tuple[CountingView, QStandardItemModel]:
    model = QStandardItemModel(0, 2)
    rows(model, row_count)
    view = CountingView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(320, 240)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.paints >= 1)  # shown once
    settle()
    view.paints = 0
    return view, model


def test_rows_appended_below_a_full_view_move_the_scroll_bar_without_a_repaint(qtbot: QtBot) -> None:
    view, model = shown_table(qtbot, 50)
    bar = view.verticalScrollBar()
    before = bar.maximum()
    rows(model, 10)
    qtbot.waitUntil(lambda: bar.maximum() == before + 10)
    settle()  # a repaint asked for by the append would happen here
    assert view.paints == 0
    bar.setValue(bar.maximum())  # the appended rows are there to scroll to, and painted when shown
    qtbot.waitUntil(lambda: view.paints >= 1)
    assert view.rowAt(view.viewport().height() - 1) == 59


def test_rows_appended_into_view_are_painted(qtbot: QtBot) -> None:
    view, model = shown_table(qtbot, 2)  # the viewport has room below the rows
    rows(model, 2)
    qtbot.waitUntil(lambda: view.paints >= 1)


def test_a_reset_right_after_an_append_still_repaints(qtbot: QtBot) -> None:
    view, model = shown_table(qtbot, 50)
    rows(model, 10)
    model.removeRows(0, 55)  # before Qt lays the view out again
    qtbot.waitUntil(lambda: view.paints >= 1)
    assert view.verticalScrollBar().maximum() == 0
    assert view.model().rowCount() == 5
