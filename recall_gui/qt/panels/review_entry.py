"""The entry under review, whole: its name and place, its standing verdict, and its text with what the model
never reads tinted; or, for an entry changed since it was reviewed, the old and the new text side by side.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.inspect import DiffLine
from recall_gui.qt.panels.diff_view import DiffView
from recall_gui.qt.panels.status_note import StatusNote, Tone, tint
from recall_gui.qt.widgets import selectable_label, text_view

#: The tint of the text past the model's cut.
UNREAD = QColor("#808080")
VERDICT_TONES: dict[str, Tone] = {
    "correct": "good",
    "outdated": "warning",
    "wrong": "bad",
    "duplicate": "warning",
    "skip": "neutral",
}


def sides(lines: tuple[DiffLine, ...]) -> tuple[tuple[DiffLine, ...], tuple[DiffLine, ...]]:
    """The lines of a diff as the old text has them, and as the new one does."""
    return (
        tuple(line for line in lines if line.kind != "added"),
        tuple(line for line in lines if line.kind != "removed"),
    )


class ReviewEntryView(QWidget):
    """``reviewEntryTitle``, ``reviewEntryPlace``, ``reviewStanding``, ``reviewContent``, and for a
    changed entry ``reviewOldText`` and ``reviewNewText`` (``reviewChangedTitles``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = selectable_label("reviewEntryTitle", wrap=True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.place = selectable_label("reviewEntryPlace", wrap=True)
        self.place.setEnabled(False)  # the dim text colour: secondary to the title
        self.standing = StatusNote("reviewStanding")
        self.content = text_view("reviewContent", read_only=True)
        self.content.setPlaceholderText("No entry is shown: choose a database, and an order to walk it in.")
        self.old_text = DiffView("reviewOldText")
        self.new_text = DiffView("reviewNewText")
        self.old_title = QLabel()
        self.new_title = QLabel()
        for label in (self.old_title, self.new_title):
            label.setWordWrap(True)
        self.changed = QWidget()
        self.changed.setObjectName("reviewChangedTitles")
        pair = QHBoxLayout(self.changed)
        pair.setContentsMargins(0, 0, 0, 0)
        for title, view in ((self.old_title, self.old_text), (self.new_title, self.new_text)):
            column = QVBoxLayout()
            column.addWidget(title)
            column.addWidget(view, 1)
            pair.addLayout(column, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.content)
        self.stack.addWidget(self.changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.place)
        layout.addWidget(self.standing)
        layout.addWidget(self.stack, 1)
        self.clear()

    def clear(self, text: str = "") -> None:
        self.title.setText(text or "No entry")
        self.place.clear()
        self.standing.hide()
        self.content.clear()
        self.stack.setCurrentWidget(self.content)

    def show_entry(self, title: str, place: str, content: str) -> None:
        self.title.setText(title)
        self.place.setText(place)
        self.stack.setCurrentWidget(self.content)
        if self.content.toPlainText() != content:
            self.content.setPlainText(content)
        self.content.setExtraSelections([])
        self.content.moveCursor(QTextCursor.MoveOperation.Start)

    def show_standing(self, text: str, verdict: str | None) -> None:
        """The verdict standing on the entry (``None``: none yet) in words."""
        self.standing.show_note(text, VERDICT_TONES.get(verdict or "", "neutral"))
        self.standing.show()

    def show_cut(self, read_chars: int) -> None:
        """Tint the text from ``read_chars`` on: the model never reads it."""
        document = self.content.document()
        if read_chars >= document.characterCount() - 1:
            self.content.setExtraSelections([])
            return
        base = self.content.palette().color(QPalette.ColorRole.Base)
        look = QTextCharFormat()
        look.setBackground(tint(base, UNREAD, 0.25))
        look.setForeground(self.content.palette().color(QPalette.ColorRole.PlaceholderText))
        cursor = QTextCursor(document)
        cursor.setPosition(read_chars)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        unread = QTextEdit.ExtraSelection()
        unread.cursor = cursor
        unread.format = look
        self.content.setExtraSelections([unread])

    def unread_text(self) -> str:
        """The text shown as past the model's cut ("" when all of it is read)."""
        marks = self.content.extraSelections()
        return marks[0].cursor.selectedText().replace("\u2029", "\n") if marks else ""

    def show_changed(self, old_title: str, new_title: str, lines: tuple[DiffLine, ...]) -> None:
        """The text it had when reviewed beside the text it has now, the changes marked on each side."""
        old, new = sides(lines)
        self.old_title.setText(old_title)
        self.new_title.setText(new_title)
        self.old_text.show_diff(old, "(the same)")
        self.new_text.show_diff(new, "(the same)")
        self.stack.setCurrentWidget(self.changed)

    @property
    def showing_changed(self) -> bool:
        return self.stack.currentWidget() is self.changed

    def focus_text(self) -> None:
        shown = self.content if self.stack.currentWidget() is self.content else self.new_text
        shown.setFocus(Qt.FocusReason.OtherFocusReason)
        if isinstance(shown, QPlainTextEdit):
            shown.ensureCursorVisible()
