"""The agent's tool description: which databases are active, each one's description, the suffix the tool
description ends with — the database list generated live from the registry, then the user's notes, or
their own text instead — and what the agent gets in the end.

The page only shows :class:`~recall_gui.core.drafts.Drafts` (the services' shared drafts) and hands what
the user does to it: the rules (when a draft ends, what conflicts, what agents would get) live in the
core. Registry edits go through the core, which rewrites one field atomically and refuses a file that
does not parse; the suffix is saved in the app's config dir.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, QPoint, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QKeySequence,
    QPalette,
    QShortcut,
    QShowEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.base import DEFAULT_DESCRIPTION, Recall, RecallError, compose_description
from recall_gui.core.drafts import DescriptionState, SuffixStatus
from recall_gui.core.messages import UserMessage, user_message
from recall_gui.core.registry import (
    LEGACY_BACKUP,
    LEGACY_FILE,
    UNREADABLE_TAG,
    Registry,
    SuffixDrift,
    SuffixMode,
    SuffixWarning,
    set_active,
)
from recall_gui.qt.models.databases_table import ACTIVE, EMBEDDING, NAME, DatabasesTableModel
from recall_gui.qt.pages.database_actions import DatabaseActions
from recall_gui.qt.panels.status_note import StatusNote, Tone, tint
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import group_box, push_button, text_view

#: What is generated from the registry (the live list) is tinted towards this colour, in its view and in
#: the preview; the user's own text towards the palette's highlight colour.
GENERATED_ACCENT = QColor("#2e9e5b")
GENERATED_TINT = 0.10

#: How strongly the user's own text is tinted in the preview (towards the palette's highlight colour).
OWN_TEXT_TINT = 0.22


def _drift_advice(drift: SuffixDrift, mode: SuffixMode) -> str:
    """What to do about ``drift`` on this page (the core's hints send the user here)."""
    if mode is SuffixMode.OVERRIDE:
        return "Edit your text, or choose “Generated list, then my notes”."
    if drift.inactive and not drift.unknown:
        return "Edit your notes, or tick the database on the left."
    return "Edit your notes."


def _band(view: QPlainTextEdit, start: int, end: int, colour: QColor) -> QTextEdit.ExtraSelection:
    """Whole lines of ``view`` from ``start`` to ``end`` (Qt positions) behind ``colour``."""
    selection = QTextEdit.ExtraSelection()
    cursor = QTextCursor(view.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    selection.cursor = cursor
    char_format = QTextCharFormat()
    char_format.setBackground(colour)
    char_format.setProperty(QTextFormat.Property.FullWidthSelection, True)
    selection.format = char_format
    return selection


def utf16_length(text: str) -> int:
    """``text``'s length as Qt counts it (UTF-16 code units: an emoji counts two)."""
    return len(text.encode("utf-16-le")) // 2


class DescriptionPage(QWidget):
    """``activeTable``, ``dbDescriptionEdit``; the suffix: ``suffixNotesMode``/``suffixOverrideMode``,
    ``suffixState``, ``suffixDrift``, ``generatedSuffixView``, ``suffixEdit``; ``descriptionPreview`` and
    ``toolJsonView``."""

    #: This page changed the registry files; the window reloads them.
    registryEdited = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("descriptionPage")
        self.services = services
        self.drafts = services.drafts
        self._described: str | None = None
        #: The database whose description was saved last, until the user edits or chooses another.
        self._just_saved: str | None = None
        #: What the banner last said about the served suffix, so it speaks only when that changes, and
        #: the saved settings and registry it was worked out for (not again for every key typed).
        self._announced: tuple[SuffixWarning, ...] = ()
        self._announced_for: tuple[object, object] = (None, None)
        self._generated_shown: str | None = None
        #: What the preview shows (the suffix, the user's text, the mode, the tints), and whether the long
        #: texts wait for the page to be shown.
        self._preview_shown: tuple[object, ...] | None = None
        self._long_texts_due = False
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("descriptionSplitter")
        self.splitter.setChildrenCollapsible(False)
        for box in (self._databases_box(), self._suffix_box(), self._preview_box()):
            self.splitter.addWidget(box)
        self.splitter.setSizes([380, 440, 460])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.addWidget(self.splitter)

        self.suffix_edit.textChanged.connect(self._on_suffix_edited)
        self.mode_combo.activated.connect(self._on_mode_chosen)
        self.save_suffix_button.clicked.connect(self.save_suffix)
        self.revert_suffix_button.clicked.connect(self.revert_suffix)
        self.databases_model.activeToggled.connect(self._on_active_toggled)
        self.active_table.selectionModel().selectionChanged.connect(self._on_database_selected)
        self.db_description_edit.textChanged.connect(self._on_description_edited)
        self.save_description_button.clicked.connect(self.save_description)
        self.revert_description_button.clicked.connect(self.revert_description)
        self._apply_palette()
        self.drafts.suffix.changed.add(self._show_suffix)
        self.drafts.descriptions.changed.add(self._show_description_editor)
        self._show_description_editor()
        self._show_suffix()

    # --- layout ---------------------------------------------------------------------------------------

    def _databases_box(self) -> QWidget:
        """Which databases are active, and the description of the selected one."""
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
        self.database_actions = DatabaseActions(self.services, lambda: self._described, self)
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
        return group_box(
            "Databases agents can search",
            [(self.active_table, 2), (self.description_label, 0), (self.db_description_edit, 1)],
            [self.revert_description_button, self.save_description_button],
        )

    def _suffix_box(self) -> QWidget:
        """The suffix: the generated list (live) and the user's notes, or the user's text instead."""
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("suffixMode")
        self.mode_combo.addItem("Generated list, then my notes", SuffixMode.NOTES)
        self.mode_combo.addItem("My own text instead of the list", SuffixMode.OVERRIDE)
        self.mode_combo.setItemData(
            0,
            "The list of active databases follows the registry; your notes follow it",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.mode_combo.setItemData(
            1,
            "Your text replaces the generated list: it no longer follows the registry",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.suffix_state = StatusNote("suffixState")
        self.suffix_drift = StatusNote("suffixDrift")
        self.suffix_drift.hide()
        self.generated_label = QLabel("Generated list — live, follows the registry:")
        self.generated_label.setObjectName("generatedSuffixLabel")
        self.generated_label.setWordWrap(True)
        self.generated_view = text_view("generatedSuffixView", read_only=True, monospace=True)
        self.generated_view.setToolTip("cosh's list of the active databases, made afresh from the registry")
        self.editor_label = QLabel()
        self.editor_label.setObjectName("suffixEditLabel")
        self.editor_label.setWordWrap(True)
        self.suffix_edit = text_view("suffixEdit", monospace=True)
        self.suffix_splitter = QSplitter(Qt.Orientation.Vertical)
        self.suffix_splitter.setObjectName("suffixSplitter")
        self.suffix_splitter.setChildrenCollapsible(False)
        self.generated_pane = self._labelled(self.generated_label, self.generated_view)
        self.suffix_splitter.addWidget(self.generated_pane)
        self.suffix_splitter.addWidget(self._labelled(self.editor_label, self.suffix_edit))
        self.suffix_splitter.setSizes([300, 200])
        self.save_suffix_button = push_button(
            "&Save Suffix", "saveSuffixButton", "Agents get what the preview shows from now on (Ctrl+S)"
        )
        self.save_suffix_button.setShortcut("Ctrl+S")
        self.revert_suffix_button = push_button(
            "Revert", "revertSuffixButton", "Undo your edits: show what agents get now"
        )
        return group_box(
            "Description suffix",
            [
                (self.mode_combo, 0),
                (self.suffix_state, 0),
                (self.suffix_drift, 0),
                (self.suffix_splitter, 1),
            ],
            [self.revert_suffix_button, self.save_suffix_button],
        )

    @staticmethod
    def _labelled(label: QLabel, view: QPlainTextEdit) -> QWidget:
        """``view`` under ``label``, as one pane of a splitter; the view keeps at least three lines."""
        view.setMinimumHeight(3 * view.fontMetrics().lineSpacing())
        pane = QWidget()
        column = QVBoxLayout(pane)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(label)
        column.addWidget(view, 1)
        return pane

    def _preview_box(self) -> QWidget:
        """What the agent gets: the full description and the MCP tool object."""
        self.description_preview = text_view("descriptionPreview", read_only=True)
        self.tool_json_view = text_view("toolJsonView", read_only=True, monospace=True)
        self.preview_tabs = QTabWidget()
        self.preview_tabs.setObjectName("previewTabs")
        self.preview_tabs.addTab(self.description_preview, "Full description")
        self.preview_tabs.addTab(self.tool_json_view, "MCP tool JSON")
        self.preview_legend = QLabel()
        self.preview_legend.setObjectName("previewLegend")
        self.preview_legend.setWordWrap(True)
        self.preview_legend.setTextFormat(Qt.TextFormat.RichText)
        return group_box("What the agent gets", [(self.preview_tabs, 1), (self.preview_legend, 0)])

    # --- the registry -----------------------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        """Show ``registry``'s databases (the drafts follow it through the services)."""
        selected = self._described
        self.databases_model.show(registry)
        self._fit_columns()
        if registry.get(selected or "") is None and not self.drafts.descriptions.is_drafted(selected):
            selected = self.databases_model.name_at(0)
        self._select_database(selected)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.active_table.viewport():
            self._fit_columns()
        return super().eventFilter(watched, event)

    def _fit_columns(self) -> None:
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
        self.registryEdited.emit()
        return True

    # --- database descriptions ------------------------------------------------------------------------

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
        self.registryEdited.emit()
        return True

    def revert_description(self) -> None:
        self.drafts.descriptions.revert(self._described)

    # --- the suffix -----------------------------------------------------------------------------------

    def _on_suffix_edited(self) -> None:
        self.drafts.suffix.edit(self.suffix_edit.toPlainText())

    def _on_mode_chosen(self, index: int) -> None:
        self.drafts.suffix.set_mode(self.mode_combo.itemData(index))

    def _show_suffix(self) -> None:
        """Everything about the suffix, as the draft says: mode, state, drift, the two parts, the preview."""
        draft = self.drafts.suffix
        overriding = draft.mode is SuffixMode.OVERRIDE
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(draft.mode))
        self.generated_pane.setVisible(not overriding)
        if self.suffix_edit.toPlainText() != draft.text:
            with QSignalBlocker(self.suffix_edit):
                self.suffix_edit.setPlainText(draft.text)
        if overriding:
            self.editor_label.setText(
                "Your text, served instead of the generated list (it does not follow the registry):"
            )
            self.suffix_edit.setPlaceholderText("Your own list of databases and what to search them for")
        else:
            self.editor_label.setText("Your notes, added after the list:")
            self.suffix_edit.setPlaceholderText(
                "e.g. “Prefer notes for questions about the team.” (the list above stays up to date)"
            )
        text, tone, tip = self._suffix_state()
        self.suffix_state.show_note(text, tone)
        self.suffix_state.setToolTip(tip)
        drift = draft.drift
        self.suffix_drift.setVisible(bool(drift))
        if drift:
            said = drift.describe()
            if draft.edited:  # not served yet: say what saving would do
                said = f"Once saved, {said[:1].lower()}{said[1:]}"
            self.suffix_drift.show_note(f"{said} {_drift_advice(drift, draft.mode)}", "bad")
        self.save_suffix_button.setEnabled(draft.dirty)
        self.revert_suffix_button.setEnabled(draft.edited)
        self._show_long_texts()
        self._announce_served()

    def _show_long_texts(self) -> None:
        """The generated list and the preview, as the draft says. They are long for a large registry
        (megabytes at 50,000 databases, a long stall to lay out), so they are laid out only while the page
        is shown (when it is shown next, otherwise) and only when they changed."""
        if not self.isVisible():
            self._long_texts_due = True
            return
        self._long_texts_due = False
        draft = self.drafts.suffix
        if self._generated_shown != draft.generated:
            self._generated_shown = draft.generated
            self.generated_view.setPlainText(draft.generated)
        self._show_preview()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_columns()
        if self._long_texts_due:
            self._show_long_texts()

    def _suffix_state(self) -> tuple[str, Tone, str]:
        """The sentence above the editor (and its tooltip): whether agents get what the page shows, and
        where the text came from."""
        draft = self.drafts.suffix
        saved = draft.saved
        status = draft.status
        if status is SuffixStatus.CHANGED_ELSEWHERE:
            return (
                "Edited, not saved — and the saved suffix was changed elsewhere meanwhile: Save replaces it "
                "with yours, Revert shows it.",
                "bad",
                "Another recall-gui window, or an editor, saved the suffix while you were editing here.",
            )
        if status is SuffixStatus.EDITED:
            return "Edited, not saved: agents still get the saved suffix.", "warning", ""
        if status is SuffixStatus.UNREADABLE:
            problem = saved.problems[0]
            return (
                f"{problem.path.name} cannot be read, so agents get the generated list alone. Below is what "
                f"could be read (� for bad bytes); Save replaces the file, keeping it as "
                f"{problem.path.name}.{UNREADABLE_TAG}.",
                "bad",
                problem.message,
            )
        if saved.legacy is not None:
            tip = f"{saved.legacy.path} was saved by recall-gui 0.1. Saving keeps it as {LEGACY_BACKUP}."
            if saved.mode is SuffixMode.NOTES:
                return (
                    f"From {LEGACY_FILE} (an earlier recall-gui): its database list is generated live now, "
                    "and the text after it is your notes.",
                    "good",
                    tip,
                )
            return (
                f"From {LEGACY_FILE} (an earlier recall-gui): it does not start with the generated list, so "
                "it still replaces it.",
                "good",
                tip,
            )
        if saved.mode is SuffixMode.OVERRIDE:
            return (
                "Saved: your text replaces the generated list; it does not follow the registry.",
                "good",
                "",
            )
        if saved.notes:
            return "Saved: agents get the live list, then your notes.", "good", ""
        return "Agents get the live list. Add notes below to tell them more.", "good", ""

    def _colours(self) -> tuple[QColor, QColor]:
        """The tints of the generated (live) text and of the user's own, mixed from the current palette."""
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        return (
            tint(base, GENERATED_ACCENT, GENERATED_TINT),
            tint(base, palette.color(QPalette.ColorRole.Highlight), OWN_TEXT_TINT),
        )

    def _apply_palette(self) -> None:
        """The generated list's view in the generated tint: it cannot be edited, and it is not the user's."""
        generated, _own = self._colours()
        palette = self.generated_view.palette()
        palette.setColor(QPalette.ColorRole.Base, generated)
        self.generated_view.setPalette(palette)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched between light and dark
            self._apply_palette()
            self._show_long_texts()

    def _show_preview(self) -> None:
        """The full description and the tool JSON as agents would get them if saved now, the generated
        list and the user's own text tinted apart."""
        draft = self.drafts.suffix
        suffix = draft.shown
        generated_colour, own_colour = self._colours()
        overriding = draft.mode is SuffixMode.OVERRIDE
        shown = (suffix, draft.text, overriding, generated_colour.rgba(), own_colour.rgba())
        if shown == self._preview_shown:
            return
        self._preview_shown = shown
        self.description_preview.setPlainText(compose_description(suffix))
        self.tool_json_view.setPlainText(Recall().with_description(suffix).to_json())
        head = utf16_length(f"{DEFAULT_DESCRIPTION}\n\n")
        own_start = head + utf16_length(suffix[: len(suffix) - len(draft.text)])
        ranges = [(own_start, own_start + utf16_length(draft.text) if draft.text else own_start, own_colour)]
        if not overriding:
            ranges.insert(0, (head, own_start, generated_colour))
        self.description_preview.setExtraSelections(
            [_band(self.description_preview, *r) for r in ranges if r[1] > r[0]]
        )
        chips = [(own_colour, "your own text" if overriding else "your notes")]
        if not overriding:
            chips.insert(0, (generated_colour, "generated, live"))
        self.preview_legend.setText(
            "In the preview: "
            + " · ".join(
                f'<span style="background-color:{c.name()}">&nbsp;{t}&nbsp;</span>' for c, t in chips
            )
        )

    def _announce_served(self) -> None:
        """Say in the banner when what agents get now names the wrong databases or cannot be read."""
        draft = self.drafts.suffix
        seen_saved, seen_registry = self._announced_for
        if seen_saved is draft.saved and seen_registry is draft.registry:
            return
        self._announced_for = (draft.saved, draft.registry)
        warnings = draft.served_warnings()
        if warnings and warnings != self._announced:
            first = warnings[0]
            self.services.show_message(UserMessage(first.message, first.hint, "warning"))
        self._announced = warnings

    def revert_suffix(self) -> None:
        self.drafts.suffix.revert()

    def save_suffix(self) -> bool:
        draft = self.drafts.suffix
        had_legacy = draft.saved.legacy is not None
        try:
            draft.save()
        except RecallError as error:
            message = user_message(error)
            hint = " ".join(filter(None, [message.hint, "Your text is still in the editor."]))
            self.services.show_message(replace(message, hint=hint))
            return False
        kept = f" The earlier {LEGACY_FILE} is kept as {LEGACY_BACKUP}." if had_legacy else ""
        warnings = draft.served_warnings()
        if warnings:  # saved as the user chose, but they should know
            first = warnings[0]
            self.services.show_message(
                UserMessage(f"Suffix saved.{kept} {first.message}", first.hint, "warning", "description")
            )
        else:
            self.services.show_message(
                UserMessage(f"Suffix saved: agents get it from now on.{kept}", None, "info", "description")
            )
        return True
