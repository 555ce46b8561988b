"""The tables' view: rows appended below a full viewport update the scroll bar without a repaint, and
every other change still repaints (checked by counting the view's paint events).

That nothing was painted is read only after a later paint of the same window: Qt paints every widget of a
window that needs it in one pass, so once a beacon beside the view was painted, a repaint the view had
asked for earlier would have been painted with it."""

from __future__ import annotations

from PySide6.QtGui import QPaintEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from recall_gui.qt.widgets import PlaceholderTableView


class CountingView(PlaceholderTableView):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        super().paintEvent(event)


class Beacon(QWidget):
    """A small widget in the view's window whose paints prove that the window's pending paints are done."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0
        self.setFixedHeight(8)

    def paintEvent(self, _event: QPaintEvent) -> None:
        self.paints += 1


class Shown:
    """The window (held here: qtbot holds it only weakly), its view, the view's model, and the beacon."""

    def __init__(
        self, window: QWidget, view: CountingView, model: QStandardItemModel, beacon: Beacon
    ) -> None:
        self.window, self.view, self.model, self.beacon = window, view, model, beacon

    def flush(self, qtbot: QtBot) -> None:
        """Until the window painted everything it had to paint before now."""
        before = self.beacon.paints
        self.beacon.update()
        qtbot.waitUntil(lambda: self.beacon.paints > before)


def rows(model: QStandardItemModel, count: int) -> None:
    start = model.rowCount()
    for row in range(start, start + count):
        model.appendRow([QStandardItem(f"id-{row}"), QStandardItem(f"content {row}")])


def shown_table(qtbot: QtBot, row_count: int) -> Shown:
    model = QStandardItemModel(0, 2)
    rows(model, row_count)
    window = QWidget()
    qtbot.addWidget(window)
    view, beacon = CountingView(), Beacon()
    layout = QVBoxLayout(window)
    layout.addWidget(view)
    layout.addWidget(beacon)
    view.setModel(model)
    window.resize(320, 260)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: view.paints > 0)
    shown = Shown(window, view, model, beacon)
    shown.flush(qtbot)
    view.paints = 0
    return shown


def test_rows_appended_below_a_full_view_move_the_scroll_bar_without_a_repaint(qtbot: QtBot) -> None:
    shown = shown_table(qtbot, 50)
    view, model = shown.view, shown.model
    bar = view.verticalScrollBar()
    before = bar.maximum()
    rows(model, 10)
    qtbot.waitUntil(lambda: bar.maximum() == before + 10)  # the view was laid out again
    shown.flush(qtbot)
    assert view.paints == 0
    bar.setValue(bar.maximum())  # the appended rows are there to scroll to, and painted when shown
    qtbot.waitUntil(lambda: view.paints >= 1)
    assert view.rowAt(view.viewport().height() - 1) == 59


def test_rows_appended_into_view_are_painted(qtbot: QtBot) -> None:
    shown = shown_table(qtbot, 2)  # the viewport has room below the rows
    rows(shown.model, 2)
    qtbot.waitUntil(lambda: shown.view.paints >= 1)


def test_a_reset_right_after_an_append_still_repaints(qtbot: QtBot) -> None:
    shown = shown_table(qtbot, 50)
    view = shown.view
    rows(shown.model, 10)
    shown.model.removeRows(0, 55)  # before Qt lays the view out again
    qtbot.waitUntil(lambda: view.paints >= 1)
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() == 0)
    assert view.model().rowCount() == 5
