"""The entry detail: one row in full — id, content, every other column, and its vector — to verify it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.base import json_text
from recall_gui.qt.models.roles import plain_value
from recall_gui.qt.models.text_rows import TextRowsModel, fit_columns, text_rows_view
from recall_gui.qt.widgets import group_box, monospace_font_family, push_button, selectable_label, text_view

if TYPE_CHECKING:
    from recall_gui.core.base import Vector
    from recall_gui.core.embedders import ReadExtent

#: Metadata rows shown without scrolling; the content gets the rest of the height.
MAX_METADATA_ROWS = 8
#: Places in the content marked as matching the browse filter, at most.
MAX_HIGHLIGHTS = 1000
#: A marker yellow, readable with black text on light and dark themes alike.
HIGHLIGHT = QColor("#ffd54f")
#: The text the model never reads: grey, readable on light and dark themes.
UNREAD = QColor("#8a8a8a")
#: The line the entry's text shows where the model stopped reading it.
MARKER_TEXT = "the model stopped reading here"
#: Where the window remembers the monospace choice.
MONOSPACE_SETTING = "detail/monospace"
EMPTY_TEXT = "Select a row to see the whole entry: its full content, every other column and its vector."


def _copy(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def _cell(name: str, value: Any, column: int) -> str:
    """A row of the other columns: the column's name, or its value as text (JSON unless it is text)."""
    if column == 0:
        return name
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)


def _row(*widgets: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    for number, widget in enumerate(widgets):
        row.addWidget(widget, 1 if number == 0 else 0)
    return row


class DetailPanel(QWidget):
    """Shows one entry; :meth:`show_entry` with ``vector=None`` and ``vector_pending=True`` while the
    vector is still being read (browsed rows carry no vector until opened)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._vector: Vector | None = None
        self._metadata: dict[str, Any] = {}
        #: The entry's content as stored (the view may hold a marker line besides it).
        self._content = ""
        #: Where the view's marker of the model's cut is, when it holds one (see :meth:`set_reading`).
        self._cut: int | None = None
        #: Whether the content holds highlighted matches.
        self._marked = False

        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setObjectName("detailEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setContentsMargins(48, 0, 48, 0)
        self.empty.setEnabled(False)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self._scrolling(self._details()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        self.clear()

    @staticmethod
    def _scrolling(details: QWidget) -> QScrollArea:
        """The entry scrolls up and down in a short window rather than making the window taller."""
        area = QScrollArea()
        area.setObjectName("detailScroll")
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setWidget(details)
        scroll_bar = area.verticalScrollBar().sizeHint().width()
        area.setMinimumWidth(details.minimumSizeHint().width() + scroll_bar)
        return area

    def _details(self) -> QWidget:
        self.id_edit = QLineEdit()
        self.id_edit.setObjectName("detailId")
        self.id_edit.setReadOnly(True)
        # It wraps: unwrapped, a long position ("rank 1 · distance … · version 3, not the latest") was the
        # entry pane's least width, and cut its Copy buttons off in an 800-pixel window.
        self.position = QLabel()
        self.position.setObjectName("detailPosition")
        self.position.setTextFormat(Qt.TextFormat.PlainText)
        self.position.setWordWrap(True)
        self.vector_label = selectable_label("detailVector")
        copy_id = push_button("Copy", "copyIdButton", "Copy the id")
        self.copy_vector = push_button("Copy", "copyVectorButton", "Copy the vector as a JSON array")
        copy_id.clicked.connect(lambda: _copy(self.id_edit.text()))
        self.copy_vector.clicked.connect(lambda: _copy(self.vector_json()))
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("ID:", _row(self.id_edit, copy_id))
        form.addRow("Position:", self.position)
        form.addRow("Vector:", _row(self.vector_label, self.copy_vector))
        self.context_label = selectable_label("detailContext")
        self.context_label.setWordWrap(True)
        form.addRow("Document:", self.context_label)
        self.reads_label = selectable_label("detailReads")
        self.reads_label.setWordWrap(True)
        form.addRow("Model reads:", self.reads_label)

        self.content = text_view("detailContent", read_only=True)
        copy_content = push_button("Copy", "copyContentButton", "Copy the full content")
        copy_content.clicked.connect(lambda: _copy(self._content))
        self.monospace = QCheckBox("&Monospace, no wrap")
        self.monospace.setObjectName("detailMonospace")
        self.monospace.setToolTip(
            "Show the content as preformatted text: a fixed-width font, lines as they are"
        )
        self.monospace.toggled.connect(self.set_monospace)
        # The other columns as a model the view asks for the rows on screen only: a wide table has
        # thousands (docs/PERFORMANCE_LOG.md#text_rows).
        self.metadata_model = TextRowsModel(["Column", "Value"], self)
        self.metadata = text_rows_view("detailMetadata", self.metadata_model)
        self.metadata.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.copy_metadata = push_button("Copy", "copyMetadataButton", "Copy the other columns as JSON")
        self.copy_metadata.clicked.connect(lambda: _copy(self.metadata_json()))
        self.metadata_box = group_box("Other columns", [(self.metadata, 1)], [self.copy_metadata])

        details = QWidget()
        layout = QVBoxLayout(details)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(group_box("Content", [(self.content, 1)], [self.monospace, copy_content]), 1)
        layout.addWidget(self.metadata_box, 0)
        return details

    def clear(self) -> None:
        self.stack.setCurrentWidget(self.empty)
        self._vector = None
        self._metadata = {}

    @property
    def showing(self) -> bool:
        return self.stack.currentWidget() is not self.empty

    def show_entry(
        self,
        *,
        entry_id: str,
        content: str,
        position: str,
        metadata: Mapping[str, Any],
        vector: Vector | None,
        norm: float | None,
        vector_pending: bool = False,
        highlight: str = "",
        id_tip: str = "",
    ) -> None:
        self.stack.setCurrentIndex(1)
        self.id_edit.setText(entry_id)
        self.id_edit.setCursorPosition(0)
        self.id_edit.setToolTip(id_tip)
        self.position.setText(position)
        if self._content != content or self._cut is not None:
            self._content, self._cut = content, None
            # Plain text takes the format at the view's cursor: never the marker's, or the unread grey.
            self.content.setCurrentCharFormat(QTextCharFormat())
            self.content.setPlainText(content)
        self.highlight(highlight)
        self._metadata = {name: plain_value(value) for name, value in metadata.items()}
        names, values = list(self._metadata), list(self._metadata.values())
        self.metadata_model.show(len(names), lambda row, column: _cell(names[row], values[row], column))
        fit_columns(self.metadata, [0])
        self.metadata_box.setVisible(bool(self._metadata))
        shown = min(len(self._metadata), MAX_METADATA_ROWS)
        header = self.metadata.horizontalHeader().sizeHint().height()
        row = self.metadata.verticalHeader().defaultSectionSize()
        # As tall as its rows where there is room; down to one row in a short window (it scrolls).
        self.metadata.setMinimumHeight(header + min(shown, 1) * row + 4)
        self.metadata.setMaximumHeight(header + shown * row + 4)
        self.copy_metadata.setEnabled(bool(self._metadata))
        self.set_vector(vector, norm, pending=vector_pending)
        self.set_context("reading…")
        self.reads_label.setText("reading…")

    def set_reading(self, extent: ReadExtent | None, why_not: str = "") -> None:
        """Where the model stopped reading the content: a marker line there and the text after it greyed
        (the entry's text is unchanged: Copy copies it as stored); ``None``: not known (``why_not``)."""
        if extent is None:
            self.reads_label.setText(f"not known: {why_not}" if why_not else "not known")
            return
        self.reads_label.setText(extent.short())
        if not extent.truncated or self._cut is not None:
            return
        document = self.content.document()
        # Qt counts positions in UTF-16 units; the cut is in characters of the text.
        at = len(self._content[: extent.read_chars].encode("utf-16-le")) // 2
        cursor = QTextCursor(document)
        cursor.setPosition(min(at, document.characterCount() - 1))
        marker = QTextCharFormat()
        marker.setForeground(UNREAD)
        marker.setFontItalic(True)
        marker.setFontWeight(QFont.Weight.Bold)
        cursor.insertBlock()
        cursor.insertText(f"──── {MARKER_TEXT} ({extent.limit:,} tokens) ────", marker)
        cursor.insertBlock()
        unread = QTextCharFormat()
        unread.setForeground(UNREAD)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(unread)
        self._cut = extent.read_chars
        self.content.document().setModified(False)

    def set_monospace(self, on: bool) -> None:
        """Preformatted text (code, tables, logs) in a fixed-width font without wrapping, or prose."""
        self.content.setFont(QFont(monospace_font_family()) if on else self.font())
        wrap = QPlainTextEdit.LineWrapMode
        self.content.setLineWrapMode(wrap.NoWrap if on else wrap.WidgetWidth)
        if self.monospace.isChecked() != on:
            self.monospace.setChecked(on)

    def highlight(self, text: str) -> int:
        """Mark where ``text`` occurs in the content, in any case (as the browse filter matched the row);
        returns how many places are marked (at most :data:`MAX_HIGHLIGHTS`)."""
        marks: list[QTextEdit.ExtraSelection] = []
        needle = text.strip()
        if needle:
            document = self.content.document()
            look = QTextCharFormat()
            look.setBackground(HIGHLIGHT)
            look.setForeground(QColor("black"))
            found = document.find(needle, 0)
            while not found.isNull() and len(marks) < MAX_HIGHLIGHTS:
                mark = QTextEdit.ExtraSelection()
                mark.cursor = found
                mark.format = look
                marks.append(mark)
                found = document.find(needle, found)
        if marks or self._marked:  # none before and none now: nothing to repaint
            self.content.setExtraSelections(marks)
        self._marked = bool(marks)
        return len(marks)

    def highlighted(self) -> list[str]:
        """The marked text, in order."""
        return [mark.cursor.selectedText() for mark in self.content.extraSelections()]

    def set_vector(self, vector: Vector | None, norm: float | None, *, pending: bool = False) -> None:
        self._vector = vector
        self.copy_vector.setEnabled(vector is not None)
        if vector is not None and norm is not None:
            head = ", ".join(f"{x:.4f}" for x in list(vector[:8]))
            self.vector_label.setText(f"{len(vector)}-d · norm {norm:.4f}")
            self.vector_label.setToolTip(f"{len(vector)} dimensions, norm {norm:.4f}: [{head}, …]")
        else:
            self.vector_label.setText("reading…" if pending else "not stored")
            self.vector_label.setToolTip("")

    def set_context(self, text: str, tip: str = "") -> None:
        """The entry's document and its neighbouring chunks (or why there is none)."""
        self.context_label.setText(text)
        self.context_label.setToolTip(tip)

    def metadata_json(self) -> str:
        return json_text(self._metadata, ensure_ascii=False, indent=2)

    def vector_json(self) -> str:
        return json_text([] if self._vector is None else [float(x) for x in self._vector])
