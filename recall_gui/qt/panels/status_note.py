"""A one- or two-line verdict ("the agent gets exactly what you see"), tinted by how good the news is.

The tint is mixed from the surrounding palette's window colour, so a note reads well in light and dark
themes alike; a symbol in front says the same as the colour, for those who cannot tell the colours apart.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

Tone = Literal["good", "warning", "bad", "neutral"]

ACCENTS: dict[Tone, QColor] = {
    "good": QColor("#2e9e5b"),
    "warning": QColor("#d08a10"),
    "bad": QColor("#d2453a"),
    "neutral": QColor("#808080"),
}
SYMBOLS: dict[Tone, str] = {"good": "✓", "warning": "✎", "bad": "⚠", "neutral": "…"}
#: Pixels between the note's border and its text, above and below.
NOTE_PADDING = 5


def tint(base: QColor, accent: QColor, amount: float) -> QColor:
    """``base`` moved ``amount`` (0..1) of the way towards ``accent``."""
    return QColor.fromRgbF(
        base.redF() + (accent.redF() - base.redF()) * amount,
        base.greenF() + (accent.greenF() - base.greenF()) * amount,
        base.blueF() + (accent.blueF() - base.blueF()) * amount,
    )


class StatusNote(QLabel):
    """Plain text with a tinted background and a symbol; :attr:`tone` says which."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tone: Tone = "neutral"
        self._message = ""

    @property
    def message(self) -> str:
        """The text without its symbol."""
        return self._message

    def keep_lines(self, lines: int) -> None:
        """Take the height of ``lines`` lines however short the text: a verdict that wraps onto a second
        line does not move what is below it (the rows under the mouse)."""
        frame = 2 * (NOTE_PADDING + 1)  # the style sheet's padding and border, above and below
        self.setMinimumHeight(self.fontMetrics().lineSpacing() * lines + frame)

    def show_note(self, text: str, tone: Tone) -> None:
        if (text, tone) == (self._message, self.tone) and self.text():
            return  # the same verdict again (each search's first row): no new text to lay out
        restyle = tone != self.tone or not self.styleSheet()
        self._message, self.tone = text, tone
        self.setText(f"{SYMBOLS[tone]}  {text}")
        if restyle:  # the tint depends on the tone alone (and the palette: see changeEvent)
            self._restyle()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()

    def _restyle(self) -> None:
        # The parent's colours, not the note's own: the style sheet changes the note's palette.
        parent = self.parentWidget()
        palette = parent.palette() if parent is not None else QApplication.palette()
        base = palette.color(QPalette.ColorRole.Window)
        accent = ACCENTS[self.tone]
        background = tint(base, accent, 0.08 if self.tone == "neutral" else 0.16)
        border = tint(base, accent, 0.35 if self.tone == "neutral" else 0.6)
        sheet = (
            f"QLabel#{self.objectName()} {{ background-color: {background.name()}; "
            f"border: 1px solid {border.name()}; border-radius: 5px; padding: {NOTE_PADDING}px 8px; }}"
        )
        if sheet != self.styleSheet():  # restyling sends a palette change of its own
            self.setStyleSheet(sheet)
