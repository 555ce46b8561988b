"""The row under the database list while an opened table (not in the registry) is shown: where it comes
from, the model it is searched with and why, a one-click way to choose another, and "Add to agents'
databases…"."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QPushButton, QSizePolicy, QWidget

from recall_gui import core
from recall_gui.core.base import masked
from recall_gui.core.registry import DatabaseEntry, EmbedderSpec
from recall_gui.qt.widgets import push_button, selectable_label


class OpenedBar(QWidget):
    """``openedInfo``, ``modelButton`` (its menu lists the models of the table's width) and
    ``addToAgentsButton``."""

    #: The user chose another model for the opened table (an :class:`EmbedderSpec`).
    modelChosen = Signal(object)
    addRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("openedBar")
        self.info = selectable_label("openedInfo")
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.model_button = QPushButton()
        self.model_button.setObjectName("modelButton")
        self.menu = QMenu(self.model_button)
        self.menu.setObjectName("modelMenu")
        self.menu.setToolTipsVisible(True)
        self.model_button.setMenu(self.menu)
        self.add_button = push_button(
            "Add to Agents' Databases…",
            "addToAgentsButton",
            "Register this table for agents (the dialog says which registry, and who reads it)",
        )
        self.add_button.clicked.connect(self.addRequested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(QLabel("Model:"))
        layout.addWidget(self.model_button)
        layout.addWidget(self.info, 1)
        layout.addWidget(self.add_button)
        self._width: int | None = None
        self._entry: DatabaseEntry | None = None
        self.setVisible(False)

    def show_entry(self, entry: DatabaseEntry | None, width: int | None) -> None:
        """Show ``entry`` if it is an opened table (else hide); ``width``: its vectors', once known."""
        opened = entry is not None and entry.origin == "opened"
        self.setVisible(opened)
        if entry is None or not opened:
            self._entry = None
            return
        self._entry, self._width = entry, width
        missing = entry.embedder.kind == "unknown"
        self.model_button.setText("choose a model" if missing else entry.embedder.label)
        self.model_button.setToolTip(
            f"Searched with {entry.embedder.label}: {entry.model_reason}.\nClick to choose another model."
        )
        self.info.setText(entry.model_reason)
        self.info.setToolTip(
            f"Opened from {masked(entry.uri)}, not in the registry. Nothing is written to it."
        )
        self.add_button.setEnabled(width is not None)
        self._fill_menu()

    def _fill_menu(self) -> None:
        self.menu.clear()
        entry, width = self._entry, self._width
        if entry is None or width is None:
            self.menu.addAction("The table is being read…").setEnabled(False)
            return
        group = QActionGroup(self.menu)
        choices = core.tables.model_choices(width)
        for kind, title in (("local", f"Local models ({width}-d)"), ("cloud", f"Cloud models ({width}-d)")):
            self.menu.addSection(title)
            listed = [choice for choice in choices if choice.spec.kind == kind]
            if not listed:
                self.menu.addAction(f"none of {width} dimensions").setEnabled(False)
            for choice in listed:
                action = self._model_action(choice.spec, choice.note)
                group.addAction(action)
        if entry.embedder.kind != "unknown" and entry.embedder not in [c.spec for c in choices]:
            self.menu.addSection("In use")
            group.addAction(self._model_action(entry.embedder, ""))

    def _model_action(self, spec: EmbedderSpec, note: str) -> QAction:
        action = self.menu.addAction(spec.label + (f"  ({note})" if note else ""))
        action.setCheckable(True)
        action.setChecked(self._entry is not None and spec == self._entry.embedder)
        action.setToolTip(note or "Ready")
        action.triggered.connect(lambda _checked=False, chosen=spec: self._choose(chosen))
        return action

    def _choose(self, spec: EmbedderSpec) -> None:
        if self._entry is not None and spec != self._entry.embedder:
            self.modelChosen.emit(spec)
