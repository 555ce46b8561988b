"""The inline message banner: errors and notices with what to do, inside the window, never a dialog."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.messages import UserMessage

ACCENTS = {"error": QColor("#d2453a"), "warning": QColor("#d08a10"), "info": QColor("#2f7cf6")}
ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}


def _mix(base: QColor, accent: QColor, amount: float) -> QColor:
    return QColor.fromRgbF(
        base.redF() + (accent.redF() - base.redF()) * amount,
        base.greenF() + (accent.greenF() - base.greenF()) * amount,
        base.blueF() + (accent.blueF() - base.blueF()) * amount,
    )


class MessageBanner(QFrame):
    """Shows one :class:`UserMessage` at a time; tinted from the current palette, so it suits light and
    dark themes alike."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBanner")
        self._message: UserMessage | None = None
        self._icon = QLabel()
        self._icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._text = QLabel()
        self._text.setObjectName("bannerText")
        self._hint = QLabel()
        self._hint.setObjectName("bannerHint")
        for label in (self._text, self._hint):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setTextFormat(Qt.TextFormat.PlainText)
        font = self._text.font()
        font.setBold(True)
        self._text.setFont(font)
        #: The message's one follow-up (Undo), when it has one.
        self.action_button = QPushButton()
        self.action_button.setObjectName("bannerAction")
        self.action_button.clicked.connect(self._on_action_clicked)
        self._action: Callable[[], None] | None = None
        close = QToolButton()
        close.setObjectName("bannerClose")
        close.setAutoRaise(True)
        close.setText("✕")
        close.setToolTip("Dismiss (Esc)")
        close.clicked.connect(self._on_close_clicked)
        texts = QVBoxLayout()
        texts.setSpacing(2)
        texts.addWidget(self._text)
        texts.addWidget(self._hint)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 8, 6, 8)
        layout.setSpacing(10)
        layout.addWidget(self._icon)
        layout.addLayout(texts, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    @property
    def message(self) -> UserMessage | None:
        return self._message

    def show_message(
        self, message: UserMessage, action: tuple[str, Callable[[], None]] | None = None
    ) -> None:
        """Show ``message``; ``action``: a button's text and what it does (it dismisses the message)."""
        self._message = message
        self._action = action[1] if action is not None else None
        self.action_button.setText(action[0] if action is not None else "")
        self.action_button.setVisible(action is not None)
        self._text.setText(message.text)
        self._hint.setText(message.hint or "")
        self._hint.setVisible(bool(message.hint))
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
        self._icon.setPixmap(self.style().standardIcon(ICONS[message.level]).pixmap(size, size))
        self._restyle()
        self.show()

    def dismiss(self, *topics: str) -> None:
        """Hide the message; with ``topics``, only a message about one of them."""
        if self.isHidden() or (topics and self._message is not None and self._message.topic not in topics):
            return
        self._message = None
        self._action = None
        self.hide()
        self.dismissed.emit()

    def _on_action_clicked(self) -> None:
        action = self._action
        self.dismiss()
        if action is not None:
            action()

    def _on_close_clicked(self) -> None:
        self.dismiss()  # not connected directly: clicked(bool) would pass a topic

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._message is not None:
            self._restyle()

    def _restyle(self) -> None:
        level = self._message.level if self._message else "info"
        # The surroundings' colour, not the banner's own: the style sheet below changes the banner's
        # palette, and tinting that again would never settle.
        parent = self.parentWidget()
        palette = parent.palette() if parent is not None else QApplication.palette()
        base = palette.color(QPalette.ColorRole.Window)
        accent = ACCENTS[level]
        background, border = _mix(base, accent, 0.16), _mix(base, accent, 0.6)
        sheet = (
            f"#messageBanner {{ background-color: {background.name()}; "
            f"border: 1px solid {border.name()}; border-radius: 6px; }}"
        )
        if sheet != self.styleSheet():  # restyling sends a palette change of its own
            self.setStyleSheet(sheet)
