"""The "Add to agents' databases" dialog: name, description, model and whether agents may search it now.

It only asks; the core checks again and writes (:func:`recall_gui.core.tables.registration.register_table`).
What it can tell before writing it says at once: a name that is taken or empty, and what cosh itself
will not read of the entry (a table or columns named otherwise than cosh names them).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import masked
from recall_gui.core.registry import DatabaseEntry, EmbedderSpec
from recall_gui.qt.widgets import text_view

if TYPE_CHECKING:
    from recall_gui.core.storage import ColumnMapping
    from recall_gui.core.tables import ModelChoice, Registration

SPEC_ROLE = Qt.ItemDataRole.UserRole + 1


class AddDatabaseDialog(QDialog):
    """``addDatabaseDialog``: ``addNameEdit``, ``addDescriptionEdit``, ``addModelCombo``,
    ``addActiveCheck``, ``addProblem`` and ``addCoshNote``."""

    def __init__(
        self,
        entry: DatabaseEntry,
        *,
        columns: ColumnMapping,
        taken: set[str],
        choices: Sequence[ModelChoice],
        registry: str,
        parent: QWidget | None = None,
    ) -> None:
        """``registry``: which registry the entry goes to and who reads it (``registry_readers``)."""
        super().__init__(parent)
        self.setObjectName("addDatabaseDialog")
        self.setWindowTitle("Add to agents' databases")
        self.entry, self.columns, self.taken = entry, columns, taken
        intro = QLabel(
            f"Add table <b>{html.escape(entry.table_name, False)}</b> of "
            f"{html.escape(masked(entry.uri), False)} to {html.escape(registry, False)}. "
            "The table itself is not touched."
        )
        intro.setObjectName("addIntro")
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        self.name_edit = QLineEdit(entry.table_name)
        self.name_edit.setObjectName("addNameEdit")
        self.name_edit.setToolTip("Agents pass this name as db_name to recall_search")
        self.description_edit = text_view("addDescriptionEdit")
        self.description_edit.setPlaceholderText(
            "What it holds and when to search it: agents read this in the tool's description."
        )
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("addModelCombo")
        self._fill_models(choices, entry.embedder)
        self.active_check = QCheckBox("Active: agents can search it from now on")
        self.active_check.setObjectName("addActiveCheck")
        self.active_check.setChecked(True)
        self.cosh_note = QLabel()
        self.cosh_note.setObjectName("addCoshNote")
        self.cosh_note.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setObjectName("addProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("font-weight: bold;")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setObjectName("addButton")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("&Name:", self.name_edit)
        form.addRow("&Description:", self.description_edit)
        form.addRow("&Model:", self.model_combo)
        form.addRow("", self.active_check)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.cosh_note)
        layout.addWidget(self.problem)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.name_edit.textChanged.connect(self._check)
        self.model_combo.currentIndexChanged.connect(self._check)
        self._check()
        self.resize(580, 380)

    def _fill_models(self, choices: Sequence[ModelChoice], current: EmbedderSpec) -> None:
        specs = [choice.spec for choice in choices]
        if current.kind != "unknown" and current not in specs:
            self.model_combo.addItem(current.label)
            self.model_combo.setItemData(0, current, SPEC_ROLE)
        for choice in choices:
            text = choice.spec.label + ("" if choice.ready else f" — {choice.note}")
            self.model_combo.addItem(text)
            self.model_combo.setItemData(self.model_combo.count() - 1, choice.spec, SPEC_ROLE)
        index = next((i for i in range(self.model_combo.count()) if self.model_spec(i) == current), -1)
        self.model_combo.setCurrentIndex(index)

    def model_spec(self, index: int | None = None) -> EmbedderSpec | None:
        data = self.model_combo.itemData(
            self.model_combo.currentIndex() if index is None else index, SPEC_ROLE
        )
        return data if isinstance(data, EmbedderSpec) else None

    def request(self) -> Registration:
        """What the user asked for (only valid when the dialog was accepted)."""
        spec = self.model_spec()
        assert spec is not None  # Add is disabled without a model
        return core.tables.Registration(
            self.name_edit.text(),
            self.description_edit.toPlainText().strip(),
            spec,
            active=self.active_check.isChecked(),
        )

    def _check(self) -> None:
        name = self.name_edit.text()
        problem = core.tables.check_name(name, self.taken)
        spec = self.model_spec()
        if problem is None and spec is None:
            problem = "choose the model the table was made with: agents embed their queries with it"
        notes: tuple[str, ...] = ()
        if spec is not None and name.strip():
            raw = core.tables.registry_entry(
                self.entry, self.columns, core.tables.Registration(name, "", spec), 0
            )
            notes = core.tables.registration_notes(raw, self.entry)
        self.cosh_note.setText("\n".join(f"Note: {note}." for note in notes))
        self.cosh_note.setVisible(bool(notes))
        self.problem.setText(f"Cannot add: {problem}." if problem else "")
        self.problem.setVisible(problem is not None)
        self.add_button.setEnabled(problem is None)
