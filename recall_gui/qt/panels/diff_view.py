"""A read-only view of a line diff: removed lines on a red tint, added ones on a green tint, the characters
that changed inside a line on a stronger tint, and folded unchanged stretches as one dim line.

Colours are mixed from the view's own palette (base colour towards red or green), so the diff is as
readable on a dark theme as on a light one; the ``-``/``+`` prefixes carry the same meaning without colour.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QFont, QPalette, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from recall_gui.core.inspect import DiffLine, unified_text
from recall_gui.qt.panels.status_note import tint
from recall_gui.qt.widgets import monospace_font_family

REMOVED = QColor("#e5534b")
ADDED = QColor("#3fb950")
PREFIXES = {"same": "  ", "removed": "- ", "added": "+ "}


class DiffView(QPlainTextEdit):
    """Shows a :func:`~recall_gui.core.inspect.text_diff.diff_lines` result, or a placeholder when it is
    empty."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setReadOnly(True)
        self.setFont(QFont(monospace_font_family()))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._lines: tuple[DiffLine, ...] = ()
        self._rendering = False

    @property
    def lines(self) -> tuple[DiffLine, ...]:
        return self._lines

    def show_diff(self, lines: tuple[DiffLine, ...], empty_text: str = "") -> None:
        """Show ``lines``; with none, an empty view whose placeholder says ``empty_text``."""
        self._lines = lines
        self.setPlaceholderText(empty_text)
        self._render()

    def unified(self) -> str:
        """The diff shown, as plain unified text."""
        return unified_text(self._lines)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and not self._rendering:
            self._render()

    def _formats(self) -> dict[str, tuple[QTextBlockFormat, QTextCharFormat, QTextCharFormat]]:
        """Per line kind: the line's background, its text format, and the format of changed characters."""
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        dim = palette.color(QPalette.ColorRole.PlaceholderText)
        formats = {}
        for kind, accent in (("removed", REMOVED), ("added", ADDED)):
            block = QTextBlockFormat()
            block.setBackground(tint(base, accent, 0.16))
            text = QTextCharFormat()
            changed = QTextCharFormat()
            changed.setBackground(tint(base, accent, 0.42))
            formats[kind] = (block, text, changed)
        folded = QTextCharFormat()
        folded.setForeground(dim)
        folded.setFontItalic(True)
        formats["same"] = (QTextBlockFormat(), QTextCharFormat(), QTextCharFormat())
        formats["folded"] = (QTextBlockFormat(), folded, folded)
        return formats

    def _render(self) -> None:
        self._rendering = True
        try:
            self.clear()
            if not self._lines:
                return
            formats = self._formats()
            prefix_format = QTextCharFormat()
            prefix_format.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
            cursor = QTextCursor(self.document())
            cursor.beginEditBlock()
            for number, line in enumerate(self._lines):
                block, text, changed = formats[line.kind]
                if number:
                    cursor.insertBlock(block)
                else:
                    cursor.setBlockFormat(block)
                if line.kind == "folded":
                    plural = "" if line.folded == 1 else "s"
                    cursor.insertText(f"  ⋯ {line.folded} unchanged line{plural}", text)
                    continue
                cursor.insertText(PREFIXES[line.kind], prefix_format)
                if not line.text and line.kind != "same":
                    cursor.insertText("↵ (empty line)", prefix_format)
                    continue
                _insert_marked(cursor, line, text, changed)
            cursor.endEditBlock()
            self.moveCursor(QTextCursor.MoveOperation.Start)
        finally:
            self._rendering = False


def _insert_marked(
    cursor: QTextCursor, line: DiffLine, plain: QTextCharFormat, marked: QTextCharFormat
) -> None:
    """Insert ``line.text`` with its changed ranges in ``marked``."""
    position = 0
    for start, end in line.changed:
        if start > position:
            cursor.insertText(line.text[position:start], plain)
        cursor.insertText(line.text[start:end], marked)
        position = end
    if position < len(line.text):
        cursor.insertText(line.text[position:], plain)
