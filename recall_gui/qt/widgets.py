"""Small widgets the panels share."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal, SignalInstance
from PySide6.QtGui import QFont, QFontDatabase, QKeyEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)


class PlaceholderTableView(QTableView):
    """A table that says what to do (or why it is empty) instead of showing a blank grid.

    Rows appended below a full viewport (the next page of a browsed table) change nothing on screen, yet
    Qt lays the view out again and repaints all of it: while paging through a table, every page arrival
    cost one full repaint besides the one its scrolling costs. Such a layout only updates the scroll bars.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placeholder = ""
        #: Since the last layout: ``True`` if rows were only appended below a full viewport, ``False``
        #: once anything else changed, ``None`` if nothing did.
        self._only_appended_below: bool | None = None
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().setVisible(False)
        # Fixed row heights: Qt then never measures rows, which keeps a million rows cheap.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        header = self.horizontalHeader()
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def setModel(self, model: QAbstractItemModel | None) -> None:
        previous = self.model()
        if previous is not None:
            for signal, slot in self._watched(previous):
                signal.disconnect(slot)
        super().setModel(model)
        self._only_appended_below = False
        if model is not None:
            for signal, slot in self._watched(model):
                signal.connect(slot)

    def _watched(self, model: QAbstractItemModel) -> Iterator[tuple[SignalInstance, Callable[..., None]]]:
        """The model's signals this view follows to tell an append below the view from other changes."""
        yield model.rowsAboutToBeInserted, self._on_rows_about_to_be_inserted
        for name in _RELAYOUT_SIGNALS:
            yield getattr(model, name), self._on_other_change

    def doItemsLayout(self) -> None:
        if self._only_appended_below:
            self._only_appended_below = None
            self.updateGeometries()
            return
        self._only_appended_below = None
        super().doItemsLayout()

    def _on_rows_about_to_be_inserted(
        self, parent: QModelIndex | QPersistentModelIndex, first: int, _last: int
    ) -> None:
        model = self.model()
        below = (
            not parent.isValid()
            and first == model.rowCount()
            and self.isVisible()
            and self.rowAt(self.viewport().height() - 1) != -1  # the viewport is full of rows
        )
        self._only_appended_below = below and self._only_appended_below is not False

    def _on_other_change(self, *_args: object) -> None:
        self._only_appended_below = False

    def placeholder(self) -> str:
        return self._placeholder

    def setPlaceholder(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if self._placeholder and (model is None or model.rowCount() == 0):
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            rect = self.viewport().rect().adjusted(24, 24, -24, -24)
            flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
            painter.drawText(rect, int(flags), self._placeholder)
            painter.end()


#: Model signals after which the view must be laid out and repainted in full.
_RELAYOUT_SIGNALS = (
    "modelAboutToBeReset",
    "layoutAboutToBeChanged",
    "rowsAboutToBeRemoved",
    "rowsAboutToBeMoved",
    "columnsAboutToBeInserted",
    "columnsAboutToBeRemoved",
    "columnsAboutToBeMoved",
)


class LimitSpin(QSpinBox):
    """The result limit; Enter in it searches, as in the query box."""

    returnPressed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.interpretText()
            self.returnPressed.emit()
            return
        super().keyPressEvent(event)


def monospace_font_family() -> str:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


def push_button(text: str, name: str, tip: str = "") -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    if tip:
        button.setToolTip(tip)
    return button


def text_view(name: str, *, read_only: bool = False, monospace: bool = False) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setObjectName(name)
    view.setReadOnly(read_only)
    if monospace:
        view.setFont(QFont(monospace_font_family()))
    return view


def group_box(title: str, items: Sequence[tuple[QWidget, int]], buttons: Sequence[QWidget] = ()) -> QGroupBox:
    """A titled box holding ``items`` (widget, stretch) top to bottom, with ``buttons`` right-aligned
    below them."""
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    for widget, stretch in items:
        layout.addWidget(widget, stretch)
    if buttons:
        row = QHBoxLayout()
        row.addStretch(1)
        for button in buttons:
            row.addWidget(button)
        layout.addLayout(row)
    return box
