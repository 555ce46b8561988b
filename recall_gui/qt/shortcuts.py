"""The window's own shortcuts win over the editing keys of its text fields.

A text field claims the keys its platform binds to editing before any shortcut sees them: on Linux
desktops Ctrl+E moves a line edit's cursor to the end of the line, so Ctrl+E (export) did nothing while
the query box had focus — the usual state after a search. The window lists its shortcuts in its menus and
help; a key listed there must do what it says wherever the focus is.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget


class ShortcutsFirst(QObject):
    """An event filter for one window's widgets: a key that one of the window's enabled actions
    (window-wide ones) has as its shortcut is not handed to the focused text field as an editing key.

    It watches each widget of the window as it takes the focus (where key events go), not the whole
    application: an application filter would run Python for every event the window handles, paints
    included. It belongs to the window (its parent), so it goes when the window goes.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._watch)
            self._watch(None, app.focusWidget())

    def _watch(self, _old: QWidget | None, new: QWidget | None) -> None:
        # Installed again at each focus: Qt keeps one copy per widget, and a wrapper's id() is no identity
        # for widgets Qt makes itself (cell editors), so remembering which were watched would miss some.
        if new is not None and new.window() is self._window:
            new.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        if not isinstance(watched, QWidget) or watched.window() is not self._window:
            return False
        return self._is_window_shortcut(QKeySequence(event.keyCombination()))

    def _is_window_shortcut(self, pressed: QKeySequence) -> bool:
        """True (the event stays unaccepted, so the shortcut fires) for a key the window's actions own."""
        for action in self._window.actions():
            if action.shortcutContext() != Qt.ShortcutContext.WindowShortcut or not action.isEnabled():
                continue
            if any(s.matches(pressed) == QKeySequence.SequenceMatch.ExactMatch for s in action.shortcuts()):
                return True
        return False
