"""The window's first frame: what ``recall-gui`` draws before its pages exist.

Importing and building the pages takes longer than Python and PySide6 take to start (docs/PERFORMANCE.md,
``startup``). So the window is shown first as a frame with a query box that takes the keyboard, and is
completed once it is on screen: what was typed into the frame's box meanwhile moves into the knowledge
page's query box, and keys typed while the pages are built wait in the window system's queue for it.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from PySide6.QtCore import QEventLoop, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget

#: The longest the frame waits to be on screen before the window is completed anyway (a window manager
#: that maps it late, a window started minimised).
ON_SCREEN_WAIT_S = 2.0


def is_on_screen(window: QWidget) -> bool:
    """Shown and exposed: the window system has mapped it, so it paints and takes input."""
    handle = window.windowHandle()
    return window.isVisible() and handle is not None and handle.isExposed()


class Typed(NamedTuple):
    """What the frame's query box held: its text, the cursor's place in it, and whether it had the keyboard
    (or would have, once the window is active)."""

    text: str
    cursor: int
    focused: bool


class FirstFrame(QWidget):
    """The window's content until its pages are built: a query box (``startingQueryEdit``), focused."""

    def __init__(self) -> None:
        super().__init__()
        self.query_edit = QLineEdit()
        self.query_edit.setObjectName("startingQueryEdit")
        self.query_edit.setPlaceholderText("Starting… type your query")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.addWidget(self.query_edit)
        layout.addStretch(1)

    def typed(self) -> Typed:
        edit = self.query_edit
        return Typed(edit.text(), edit.cursorPosition(), self.window().focusWidget() is edit)


def keep_typing(edit: QLineEdit, typed: Typed) -> None:
    """Give ``edit`` what the frame's box held, and the keyboard if the box had it."""
    if typed.text:
        edit.setText(typed.text)
        edit.setCursorPosition(typed.cursor)
    if typed.focused:
        edit.setFocus(Qt.FocusReason.OtherFocusReason)


def show_until_on_screen(app: QApplication, window: QWidget, timeout_s: float = ON_SCREEN_WAIT_S) -> None:
    """Show ``window`` and serve Qt's events until it is on screen and painted (at most ``timeout_s``), or
    until it is closed."""
    window.show()
    # A window manager activates a new window; without one (a bare X server, a kiosk session) the window
    # would stay inactive and none of its keyboard shortcuts would fire.
    window.raise_()
    window.activateWindow()
    deadline = time.monotonic() + timeout_s
    while window.isVisible() and not is_on_screen(window) and time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 10)
    app.processEvents()  # the paint the exposure asked for
