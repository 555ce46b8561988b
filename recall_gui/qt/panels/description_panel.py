"""What the agent reads: the tool description's suffix, the full description, the MCP tool JSON — and the
registry settings behind them (which databases are active, and each database's description).

Suffix edits are saved in the app's config dir (:class:`~recall_gui.core.suffix.SuffixStore`); registry
edits go through the core, which rewrites one field atomically and refuses a file that does not parse.
Unsaved text is never thrown away when the registry is reloaded — not even when the reloaded file does not
parse and the database is missing from it for a while — and a description another program changed under an
unsaved edit is pointed out beside the editor.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.errors import RecallError
from recall_gui.core.registry import Registry, set_active, set_description
from recall_gui.core.suffix import SuffixStore, build_tool_suffix
from recall_gui.core.tool import Recall, compose_description
from recall_gui.qt.messages import UserMessage, user_message
from recall_gui.qt.widgets import group_box, push_button, text_view

ACTIVE, NAME, EMBEDDING = range(3)


class DescriptionPanel(QWidget):
    """``activeTable``, ``dbDescriptionEdit``, ``suffixEdit``, ``descriptionPreview`` and ``toolJsonView``."""

    #: This panel changed the registry files; the window reloads them.
    registryEdited = Signal()
    #: Something the banner should show.
    message = Signal(object)
    #: The suffix editor's text or its saved state changed (typed, saved, reset, or the registry followed).
    suffixStateChanged = Signal()

    def __init__(self, store: SuffixStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self._registry: Registry | None = None
        self._generated = ""
        self._saved: str | None = None
        self._drafts: dict[str, str] = {}
        #: The registry's description of each drafted database when the user began the draft.
        self._draft_bases: dict[str, str] = {}
        self._described: str | None = None
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("descriptionSplitter")
        self.splitter.setChildrenCollapsible(False)
        for box in (self._databases_box(), self._suffix_box(), self._preview_box()):
            self.splitter.addWidget(box)
        self.splitter.setSizes([380, 420, 480])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.suffix_edit.textChanged.connect(self._on_suffix_edited)
        self.save_suffix_button.clicked.connect(self.save_suffix)
        self.reset_suffix_button.clicked.connect(self.reset_suffix)
        self.active_table.itemChanged.connect(self._on_item_changed)
        self.active_table.itemSelectionChanged.connect(self._on_database_selected)
        self.db_description_edit.textChanged.connect(self._on_description_edited)
        self.save_description_button.clicked.connect(self.save_description)
        self.revert_description_button.clicked.connect(self.revert_description)
        self._show_description_editor(None)

    def _databases_box(self) -> QWidget:
        """Which databases are active, and the description of the selected one."""
        self.active_table = QTableWidget(0, 3)
        self.active_table.setObjectName("activeTable")
        self.active_table.setHorizontalHeaderLabels(["Active", "Database", "Embedding"])
        self.active_table.verticalHeader().setVisible(False)
        self.active_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.active_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.active_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.active_table.setToolTip("Agents can search the active databases; Space toggles the selected one")
        toggle = QShortcut(QKeySequence(Qt.Key.Key_Space), self.active_table)
        toggle.setContext(Qt.ShortcutContext.WidgetShortcut)
        toggle.activated.connect(self._toggle_current)
        header = self.active_table.horizontalHeader()
        header.setSectionResizeMode(ACTIVE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(EMBEDDING, QHeaderView.ResizeMode.ResizeToContents)
        self.description_label = QLabel()
        self.description_label.setObjectName("dbDescriptionLabel")
        self.description_label.setWordWrap(True)
        self.description_label.setTextFormat(Qt.TextFormat.PlainText)
        self.db_description_edit = text_view("dbDescriptionEdit")
        self.db_description_edit.setPlaceholderText("What this database holds, in words an agent understands")
        self.save_description_button = push_button(
            "Save &Description",
            "saveDescriptionButton",
            "Write this description to the registry (rag_dbs.json)",
        )
        self.revert_description_button = push_button("Revert", "revertDescriptionButton", "Undo your edit")
        return group_box(
            "Databases agents can search",
            [(self.active_table, 2), (self.description_label, 0), (self.db_description_edit, 1)],
            [self.revert_description_button, self.save_description_button],
        )

    def _suffix_box(self) -> QWidget:
        """The suffix the agent's tool description ends with."""
        self.suffix_state = QLabel()
        self.suffix_state.setObjectName("suffixState")
        self.suffix_state.setWordWrap(True)
        self.suffix_edit = text_view("suffixEdit", monospace=True)
        self.save_suffix_button = push_button(
            "&Save Suffix", "saveSuffixButton", "Agents get this suffix from now on (Ctrl+S)"
        )
        self.save_suffix_button.setShortcut("Ctrl+S")
        self.reset_suffix_button = push_button(
            "&Reset to Generated",
            "resetSuffixButton",
            "Forget your suffix: agents get the one generated from the registry",
        )
        return group_box(
            "Description suffix",
            [(self.suffix_state, 0), (self.suffix_edit, 1)],
            [self.reset_suffix_button, self.save_suffix_button],
        )

    def _preview_box(self) -> QWidget:
        """What the agent gets: the full description and the MCP tool object."""
        self.description_preview = text_view("descriptionPreview", read_only=True)
        self.tool_json_view = text_view("toolJsonView", read_only=True, monospace=True)
        self.preview_tabs = QTabWidget()
        self.preview_tabs.setObjectName("previewTabs")
        self.preview_tabs.addTab(self.description_preview, "Full description")
        self.preview_tabs.addTab(self.tool_json_view, "MCP tool JSON")
        return group_box("What the agent gets", [(self.preview_tabs, 1)])

    # --- registry -----------------------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        """Show ``registry``; keeps unsaved suffix and description edits."""
        self._registry = registry
        names = {db.name: db for db in registry.databases}
        # A draft ends when the registry holds its text. A database missing from this snapshot keeps its
        # draft: the file may be half-written by another program, or not parse, and be whole again soon.
        self._drafts = {n: t for n, t in self._drafts.items() if n not in names or names[n].description != t}
        self._draft_bases = {n: t for n, t in self._draft_bases.items() if n in self._drafts}
        selected = self._described
        # Items are updated in place, never replaced: this runs from inside the table's own itemChanged
        # signal when the user ticks a box, and replacing that item there would delete it mid-signal.
        with QSignalBlocker(self.active_table):
            self.active_table.setRowCount(len(registry.databases))
            for row, db in enumerate(registry.databases):
                check = self._cell(row, ACTIVE)
                check.setFlags(
                    Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                )
                check.setCheckState(Qt.CheckState.Checked if db.active else Qt.CheckState.Unchecked)
                check.setData(Qt.ItemDataRole.UserRole, db.name)
                check.setToolTip("Agents can search it" if db.active else "Agents cannot search it")
                name = self._cell(row, NAME)
                name.setText(db.name)
                name.setToolTip(f"{db.uri}\n\n{db.description}")
                self._cell(row, EMBEDDING).setText(db.embedder.label)
        if selected not in names and selected not in self._drafts:
            selected = registry.databases[0].name if registry.databases else None
        self._select_database(selected)
        self._refresh_suffix()

    def _cell(self, row: int, column: int) -> QTableWidgetItem:
        item = self.active_table.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            self.active_table.setItem(row, column, item)
        return item

    def _select_database(self, name: str | None) -> None:
        for row in range(self.active_table.rowCount()):
            item = self.active_table.item(row, ACTIVE)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == name:
                self.active_table.selectRow(row)
                break
        self._show_description_editor(name)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != ACTIVE:
            return
        name = item.data(Qt.ItemDataRole.UserRole)
        self.set_database_active(str(name), item.checkState() == Qt.CheckState.Checked)

    def _toggle_current(self) -> None:
        """Space ticks or unticks the selected database, whichever cell of its row has the focus."""
        row = self.active_table.currentRow()
        item = self.active_table.item(row, ACTIVE) if row >= 0 else None
        if item is not None:
            checked = item.checkState() == Qt.CheckState.Checked
            item.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def set_database_active(self, name: str, active: bool) -> bool:
        """Activate or deactivate ``name`` in the registry; ``False`` (and a message) if it was refused."""
        if self._registry is None:
            return False
        try:
            set_active(self._registry.directory, name, active)
        except RecallError as error:
            self.message.emit(user_message(error))
            self.set_registry(self._registry)  # put the checkbox back as the file still says
            return False
        self.registryEdited.emit()
        return True

    def _on_database_selected(self) -> None:
        rows = self.active_table.selectionModel().selectedRows()
        if not rows:
            return
        item = self.active_table.item(rows[0].row(), ACTIVE)
        name = item.data(Qt.ItemDataRole.UserRole) if item else None
        if name != self._described:
            self._show_description_editor(str(name) if name else None)

    def _show_description_editor(self, name: str | None) -> None:
        self._described = name
        db = self._registry.get(name) if self._registry and name else None
        draft = self._drafts.get(name) if name else None
        self.db_description_edit.setEnabled(db is not None or draft is not None)
        shown = draft if draft is not None else db.description if db else ""
        with QSignalBlocker(self.db_description_edit):
            self.db_description_edit.setPlainText(shown)
        self._show_description_state()
        self._update_description_buttons()

    def _show_description_state(self) -> None:
        """The label above the editor: whose description it is, and whether the draft is in trouble."""
        name = self._described
        db = self._registry.get(name) if self._registry and name else None
        drafted = name is not None and name in self._drafts
        if name is None or (db is None and not drafted):
            text, tip = "Description:", ""
        elif db is None:
            text = (
                f"Description of {name} — not in the registry as it reads now (see the message above). "
                "Your edit is kept: save it once the file is fixed, or revert it."
            )
            tip = ""
        elif drafted and db.description != self._draft_bases.get(name, db.description):
            text = (
                f"Description of {name} — another program changed it while you were editing: "
                "Save replaces their text with yours, Revert shows theirs."
            )
            tip = f"Their text:\n{db.description}"
        else:
            text, tip = f"Description of {name}:", ""
        self.description_label.setText(text)
        self.description_label.setToolTip(tip)

    def _on_description_edited(self) -> None:
        name = self._described
        db = self._registry.get(name) if self._registry and name else None
        if name is None or (db is None and name not in self._drafts):
            return
        text = self.db_description_edit.toPlainText()
        if db is not None and text == db.description:
            self._drafts.pop(name, None)
            self._draft_bases.pop(name, None)
        else:
            if name not in self._drafts and db is not None:
                self._draft_bases[name] = db.description
            self._drafts[name] = text
        self._show_description_state()
        self._update_description_buttons()

    def _update_description_buttons(self) -> None:
        dirty = self._described is not None and self._described in self._drafts
        self.save_description_button.setEnabled(dirty)
        self.revert_description_button.setEnabled(dirty)

    def save_description(self) -> bool:
        """Write the edited description of the selected database to the registry."""
        name = self._described
        if self._registry is None or name is None:
            return False
        text = self.db_description_edit.toPlainText()
        try:
            set_description(self._registry.directory, name, text)
        except RecallError as error:
            message = user_message(error)
            hint = " ".join(filter(None, [message.hint, "Your text is still in the editor."]))
            self.message.emit(replace(message, hint=hint))
            return False
        self._drafts.pop(name, None)
        self._draft_bases.pop(name, None)
        self._update_description_buttons()
        self.registryEdited.emit()
        return True

    def revert_description(self) -> None:
        if self._described is not None:
            self._drafts.pop(self._described, None)
            self._draft_bases.pop(self._described, None)
            self._show_description_editor(self._described)

    # --- suffix ---------------------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        """The suffix editor holds text that agents do not get yet."""
        return self.suffix_edit.toPlainText() != self._effective()

    def _effective(self) -> str:
        return self._saved if self._saved is not None else self._generated

    def _refresh_suffix(self) -> None:
        """Re-read the saved suffix and regenerate the other; the editor follows unless it holds edits."""
        was_dirty = self.dirty
        self._generated = build_tool_suffix(self._registry) if self._registry else ""
        self._saved = self.store.load()
        if not was_dirty:
            self._set_editor(self._effective())
        self._update_suffix_state()

    def _set_editor(self, text: str) -> None:
        with QSignalBlocker(self.suffix_edit):
            self.suffix_edit.setPlainText(text)
        self._update_preview()

    def _on_suffix_edited(self) -> None:
        self._update_preview()
        self._update_suffix_state()

    def _update_preview(self) -> None:
        suffix = self.suffix_edit.toPlainText()
        self.description_preview.setPlainText(compose_description(suffix))
        self.tool_json_view.setPlainText(Recall().with_description(suffix).to_json())

    def _update_suffix_state(self) -> None:
        dirty = self.dirty
        if dirty:
            kind = "your saved suffix" if self._saved is not None else "the generated suffix"
            state = f"Edited, not saved: agents still get {kind}. The preview shows your edit."
        elif self._saved is not None:
            state = "Your saved suffix: agents get it (it no longer follows the registry)."
        else:
            state = "Generated from the active databases: agents get it, and it follows the registry."
        self.suffix_state.setText(state)
        self.save_suffix_button.setEnabled(dirty)
        self.reset_suffix_button.setEnabled(dirty or self._saved is not None)
        self.suffixStateChanged.emit()

    def save_suffix(self) -> bool:
        text = self.suffix_edit.toPlainText()
        try:
            self.store.save(text)
        except OSError as error:
            self.message.emit(
                UserMessage(
                    f"The suffix was not saved: {error.strerror or error}",
                    f"Check that {self.store.directory} is writable. Your text is still in the editor.",
                )
            )
            return False
        self._saved = text
        self._update_suffix_state()
        self.message.emit(UserMessage("Suffix saved: agents get it from now on.", None, "info"))
        return True

    def reset_suffix(self) -> None:
        try:
            self.store.reset()
        except OSError as error:
            self.message.emit(UserMessage(f"The saved suffix could not be removed: {error}", None))
            return
        self._saved = None
        self._set_editor(self._generated)
        self._update_suffix_state()
