"""Under the entry under review: one button and one key per verdict, a note, the previous and next
entry, and Undo. The keys work anywhere on the page but in the note, where they type; Enter in the note
hands the keys back to the verdicts."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from recall_gui.qt.widgets import push_button

#: Each verdict: its keys (a digit and a letter) and what it says of the entry.
VERDICT_KEYS = (
    ("correct", ("1", "C"), "the entry is right as it stands"),
    ("outdated", ("2", "O"), "it was right once: the world moved on"),
    ("wrong", ("3", "W"), "it says something false"),
    ("duplicate", ("4", "D"), "another entry says the same"),
    ("skip", ("5", "S"), "seen, not judged: it stays out of the count of reviewed entries"),
)
NEXT_KEYS, PREVIOUS_KEYS, NOTE_KEY = ("J",), ("K",), "N"


class VerdictBar(QWidget):
    """``verdict<Name>Button`` per verdict, ``reviewNote``, ``reviewPreviousButton``,
    ``reviewNextButton`` and ``reviewUndoButton``."""

    #: A verdict was given (its name), with the note typed.
    verdictChosen = Signal(str)
    nextRequested = Signal()
    previousRequested = Signal()
    undoRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdictBar")
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        for verdict, keys, meaning in VERDICT_KEYS:
            button = push_button(
                f"{keys[0]}  {verdict.capitalize()}",
                f"verdict{verdict.capitalize()}Button",
                f"{verdict.capitalize()}: {meaning} ({keys[0]} or {keys[1]})",
            )
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the page
            button.clicked.connect(lambda _checked=False, v=verdict: self.verdictChosen.emit(v))
            self.buttons[verdict] = button
            row.addWidget(button)
        row.addStretch(1)
        self.previous_button = push_button("◀ K", "reviewPreviousButton", "The previous entry (K)")
        self.next_button = push_button("J ▶", "reviewNextButton", "The next entry, without a verdict (J)")
        self.undo_button = push_button("Undo", "reviewUndoButton", "Take back the last verdict (Ctrl+Z)")
        for button, signal in (
            (self.previous_button, self.previousRequested),
            (self.next_button, self.nextRequested),
            (self.undo_button, self.undoRequested),
        ):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(signal)
            row.addWidget(button)
        self.note = QLineEdit()
        self.note.setObjectName("reviewNote")
        self.note.setPlaceholderText(
            "A note for the next verdict (N to type, Enter when done): what is wrong, what replaces it…"
        )
        self.note.setClearButtonEnabled(True)
        self.note.returnPressed.connect(self._note_done)
        note_row = QHBoxLayout()
        note_row.setContentsMargins(0, 0, 0, 0)
        note_label = QLabel("&Note:")
        note_label.setBuddy(self.note)
        note_row.addWidget(note_label)
        note_row.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(note_row)
        layout.addLayout(row)
        self.set_enabled(False, can_undo=False)

    def install_keys(self, page: QWidget) -> list[QShortcut]:
        """The verdicts', next, previous, note and Undo keys, for wherever the focus is on ``page``."""
        made = []

        def key(sequence: str | QKeySequence | QKeySequence.StandardKey, then: object) -> None:
            shortcut = QShortcut(QKeySequence(sequence), page)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(then)
            made.append(shortcut)

        for verdict, keys, _meaning in VERDICT_KEYS:
            for sequence in keys:
                key(sequence, self.buttons[verdict].click)
        for sequence in NEXT_KEYS:
            key(sequence, self.next_button.click)
        for sequence in PREVIOUS_KEYS:
            key(sequence, self.previous_button.click)
        key(NOTE_KEY, lambda: self.note.setFocus(Qt.FocusReason.ShortcutFocusReason))
        key(QKeySequence.StandardKey.Undo, self.undo_button.click)
        return made

    def set_enabled(self, on: bool, *, can_undo: bool) -> None:
        """Verdicts and moving on while an entry is shown; Undo while a verdict given here stands."""
        for button in (*self.buttons.values(), self.previous_button, self.next_button):
            button.setEnabled(on)
        self.undo_button.setEnabled(can_undo)

    def take_note(self) -> str:
        """The note typed (emptied for the next entry)."""
        text = self.note.text().strip()
        self.note.clear()
        return text

    def _note_done(self) -> None:
        """Enter in the note: the keys are the verdicts' again."""
        self.note.clearFocus()
        parent = self.parentWidget()
        if parent is not None:
            parent.setFocus(Qt.FocusReason.OtherFocusReason)
