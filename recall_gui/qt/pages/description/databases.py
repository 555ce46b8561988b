"""The description page's databases: which ones agents can search (a tick or Space writes the registry;
the context menu activates, deactivates, unregisters) and the selected one's description, edited through
the drafts and saved to the registry."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, QPoint, QSignalBlocker, Qt, QTimer, SignalInstance
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QMenu, QTableView, QWidget

from recall_gui.core.base import RecallError
from recall_gui.core.drafts import DescriptionState
from recall_gui.core.messages import user_message
from recall_gui.core.registry import Registry, set_active
from recall_gui.qt.actions.databases import DatabaseActions
from recall_gui.qt.models.databases_table import ACTIVE, EMBEDDING, NAME, DatabasesTableModel
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import group_box, push_button, text_view


class DatabaseList(QObject):
    """``activeTable``, ``dbDescriptionLabel``, ``dbDescriptionEdit`` and their buttons, in one box
    (:attr:`box`); ``edited`` is emitted after each write to the registry."""

    def __init__(self, services: WindowServices, page: QWidget, edited: SignalInstance) -> None:
        super().__init__(page)
        self.services = services
        self.drafts = services.drafts
        self._edited = edited
        #: The database whose description is shown.
        self._described: str | None = None
        #: The database whose description was saved last, until the user edits or chooses another.
        self._just_saved: str | None = None
        self.databases_model = DatabasesTableModel()
        self.active_table = QTableView()
        self.active_table.setObjectName("activeTable")
        self.active_table.setModel(self.databases_model)
        self.active_table.verticalHeader().setVisible(False)
        self.active_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.active_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.active_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.active_table.setWordWrap(False)
        self.active_table.setToolTip("Agents can search the active databases; Space toggles the selected one")
        toggle = QShortcut(QKeySequence(Qt.Key.Key_Space), self.active_table)
        toggle.setContext(Qt.ShortcutContext.WidgetShortcut)
        toggle.activated.connect(self._toggle_current)
        header = self.active_table.horizontalHeader()
        # As wide as its heading (wider than a checkbox): fitting it to its cells asked 1,000 rows each time.
        header.setSectionResizeMode(ACTIVE, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(ACTIVE, header.sectionSizeHint(ACTIVE))
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(EMBEDDING, QHeaderView.ResizeMode.Interactive)
        self.active_table.viewport().installEventFilter(self)  # to fit the columns when it is resized
        #: Activate, Deactivate, Unregister: the right-clicked database's context menu.
        self.database_actions = DatabaseActions(services, lambda: self._described, page, self._show_again)
        self.active_table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.active_table.customContextMenuRequested.connect(self._on_context_menu)
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
        self.box = group_box(
            "Databases agents can search",
            [(self.active_table, 2), (self.description_label, 0), (self.db_description_edit, 1)],
            [self.revert_description_button, self.save_description_button],
        )
        self.databases_model.activeToggled.connect(self._on_active_toggled)
        self.active_table.selectionModel().selectionChanged.connect(self._on_database_selected)
        self.db_description_edit.textChanged.connect(self._on_description_edited)
        self.save_description_button.clicked.connect(self.save_description)
        self.revert_description_button.clicked.connect(self.revert_description)
        self.drafts.descriptions.changed.add(self._show_description_editor)
        self._show_description_editor()

    def set_registry(self, registry: Registry) -> None:
        """Show ``registry``'s databases (the drafts follow it through the services)."""
        selected = self._described
        self.databases_model.show(registry)
        self.fit_columns()
        if registry.get(selected or "") is None and not self.drafts.descriptions.is_drafted(selected):
            selected = self.databases_model.name_at(0)
        self._select_database(selected)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.active_table.viewport():
            self.fit_columns()
        return super().eventFilter(watched, event)

    def fit_columns(self) -> None:
        """Database names get the width they need first; the model label gets what is left (never less
        than its heading) and is cut before a name is. Only while shown: the width of the rows on
        screen is what counts (hidden, Qt would measure every row of a large registry)."""
        table = self.active_table
        if not table.isVisible():
            return
        header = table.horizontalHeader()
        heading = header.sectionSizeHint(EMBEDDING)
        left = table.viewport().width() - header.sectionSize(ACTIVE) - table.sizeHintForColumn(NAME)
        header.resizeSection(EMBEDDING, max(heading, min(table.sizeHintForColumn(EMBEDDING), left)))

    def context_menu_at(self, row: int) -> QMenu | None:
        """The Activate / Deactivate / Unregister menu of the database in ``row``."""
        name = self.databases_model.name_at(row)
        return None if name is None else self.database_actions.menu_for(name, self.active_table)

    def _on_context_menu(self, point: QPoint) -> None:
        menu = self.context_menu_at(self.active_table.indexAt(point).row())
        if menu is not None:
            menu.exec(self.active_table.viewport().mapToGlobal(point))

    def _select_database(self, name: str | None) -> None:
        row = self.databases_model.row_of(name)
        if row >= 0:
            self.active_table.selectRow(row)
        self._describe(name)

    async def _show_again(self, name: str) -> None:
        """Describe ``name`` again (the Undo of its removal, while another one was described meanwhile)."""
        self._select_database(name)

    def _on_active_toggled(self, name: str, active: bool) -> None:
        # After the click is handled: the write re-reads the registry, which resets the model.
        QTimer.singleShot(0, lambda: self.set_database_active(name, active))

    def _toggle_current(self) -> None:
        """Space ticks or unticks the selected database, whichever cell of its row has the focus."""
        row = self.active_table.currentIndex().row()
        if row >= 0:
            checked = self.databases_model.is_active(row)
            state = Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked
            index = self.databases_model.index(row, ACTIVE)
            self.databases_model.setData(index, state.value, Qt.ItemDataRole.CheckStateRole)

    def set_database_active(self, name: str, active: bool) -> bool:
        """Activate or deactivate ``name`` in the registry; ``False`` (and a message) if it was refused."""
        registry = self.services.registry
        try:
            set_active(registry.directory, name, active)
        except RecallError as error:
            self.services.show_message(user_message(error))
            self.set_registry(registry)  # put the checkbox back as the file still says
            return False
        self._edited.emit()
        return True

    # --- the selected database's description --------------------------------------------------------------

    def _on_database_selected(self) -> None:
        rows = self.active_table.selectionModel().selectedRows()
        name = self.databases_model.name_at(rows[0].row()) if rows else None
        if name is not None and name != self._described:
            self._describe(name)

    def _describe(self, name: str | None) -> None:
        if name != self._described:
            self._just_saved = None
        self._described = name
        self._show_description_editor()

    def _show_description_editor(self) -> None:
        """The description editor, its label and buttons, as the drafts say for the chosen database."""
        drafts, name = self.drafts.descriptions, self._described
        self.db_description_edit.setEnabled(drafts.editable(name))
        text = drafts.text(name)
        if self.db_description_edit.toPlainText() != text:
            with QSignalBlocker(self.db_description_edit):
                self.db_description_edit.setPlainText(text)
        state, tip = drafts.state(name), ""
        if state is DescriptionState.NONE:
            label = "Description:"
        elif state is DescriptionState.MISSING:
            label = (
                f"Description of {name} — not in the registry as it reads now (the registry file has a "
                "problem, or another program removed it). Your edit is kept: save it once the file is "
                "fixed, or revert it."
            )
        elif state is DescriptionState.CHANGED_ELSEWHERE:
            label = (
                f"Description of {name} — another program changed it while you were editing: "
                "Save replaces their text with yours, Revert shows theirs."
            )
            entry = drafts.entry(name)
            tip = f"Their text:\n{entry.description if entry else ''}"
        elif name == self._just_saved and not drafts.is_drafted(name):
            label = f"Description of {name} — saved: agents read it from the registry now."
        else:
            label = f"Description of {name}:"
        self.description_label.setText(label)
        self.description_label.setToolTip(tip)
        dirty = drafts.is_drafted(name)
        self.save_description_button.setEnabled(dirty)
        self.revert_description_button.setEnabled(dirty)

    def _on_description_edited(self) -> None:
        self._just_saved = None
        self.drafts.descriptions.edit(self._described, self.db_description_edit.toPlainText())

    def save_description(self) -> bool:
        """Write the edited description of the selected database to the registry; ``False`` (and a
        message saying what to do, the text kept in the editor) when it was not saved."""
        name = self._described
        if name is None:
            return False
        try:
            self.drafts.descriptions.save(name)
        except RecallError as error:
            message = user_message(error)
            hint = " ".join(filter(None, [message.hint, "Your text is still in the editor."]))
            self.services.show_message(replace(message, hint=hint))
            return False
        self._just_saved = name
        self._show_description_editor()
        self.services.set_activity(f"Saved the description of {name} to {self.services.registry.dbs_path}")
        self._edited.emit()
        return True

    def revert_description(self) -> None:
        self.drafts.descriptions.revert(self._described)
