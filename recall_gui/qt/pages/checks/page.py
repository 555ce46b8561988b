"""The Checks page: golden checks (the questions that matter and the entries each must retrieve), run
through the agent's own search, with what changed since the last run.

The golden file is shared with the knowledge page through :class:`~recall_gui.qt.golden_checks.
GoldenChecks` ("Add as golden check" there adds to it). The page builds the widgets and composes its parts
(this package's ``__init__`` lists them). A run starts in the page's lane (Esc or Cancel stops it); its
ranks are kept in the app's data dir (:mod:`recall_gui.core.golden.check_history`) for the next run to
compare with, never beside the golden file or in a knowledge base.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.golden import place_text
from recall_gui.qt.models.checks_model import CHANGE, EXPECTED, QUERY, RESULT, ChecksModel
from recall_gui.qt.pages.checks.editing import CheckEditing
from recall_gui.qt.pages.checks.outcome import outcome_text, shown_path, when
from recall_gui.qt.pages.checks.running import CheckRunner
from recall_gui.qt.pages.checks.views import CheckViews
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import (
    PlaceholderTableView,
    engine_combo,
    push_button,
    selectable_label,
)

if TYPE_CHECKING:
    from recall_gui.core.golden import GoldenCheck

EMPTY_HINT = (
    "No golden checks yet. On the knowledge page, search for a question that matters, select the rows the "
    "agent must get for it, and press “Add as golden check” (Ctrl+G). Or open a golden file."
)


class ChecksPage(QWidget):
    """``checksFile``, ``checksNewButton``, ``checksOpenButton``, ``checksSaveAsButton``,
    ``checksRemoveButton``, ``checksRunButton``, ``checksCancelButton``, ``checksNote``,
    ``checksProgress``, ``checksTable`` and ``checkDetail``."""

    #: A run finished (or was cancelled, or failed): the table and the note show its outcome.
    runFinished = Signal()
    #: An edit typed in a cell was written to the golden file, or refused (the banner says why).
    editFinished = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checksPage")
        self.services = services
        self.golden = services.golden
        #: Reading the golden file; a run, a comparison or the hubs (one at a time: a newer one cancels).
        self.loading = services.operations.lane("checks-load")
        self.running = services.operations.lane(
            "checks", show_busy=lambda text: self._set_running(text is not None)
        )
        self.model = ChecksModel()
        self._build_widgets()
        #: Below the checks: the selected check, the metrics across versions, A/B, and hubs.
        self.views = views = CheckViews()
        self.detail, self.versions_view = views.detail, views.versions_view
        self.compare_view, self.hubs_view = views.compare_view, views.hubs_view
        self._lay_out()
        self.runner = CheckRunner(
            services,
            self.model,
            note=self.note,
            progress=self.progress,
            engine=self.engine_combo,
            views=(self.versions_view, self.compare_view, self.hubs_view),
            lane=self.running,
            show_detail=self._show_detail,
            finished=self.runFinished,
        )
        self.editing = editing = CheckEditing(
            services,
            self.model,
            self,
            note=self.note,
            undo_button=self.undo_button,
            selected_rows=self._selected_rows,
            forget_run=self._forget_run,
            finished=self.editFinished,
        )
        self.new_button.clicked.connect(editing.ask_new)
        self.open_button.clicked.connect(editing.ask_open)
        self.save_as_button.clicked.connect(editing.ask_save_as)
        self.remove_button.clicked.connect(editing.remove_selected)
        self.undo_button.clicked.connect(editing.undo_remove)
        undo = QShortcut(QKeySequence(QKeySequence.StandardKey.Undo), self)
        undo.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        undo.activated.connect(editing.undo_remove)
        self.run_button.clicked.connect(self.request_run)
        self.cancel_button.clicked.connect(self.cancel)
        views.versions_button.clicked.connect(self.request_versions)
        views.hubs_button.clicked.connect(self.request_hubs)
        views.compare_version_button.clicked.connect(
            lambda: self.request_compare(version=views.compare_version.value())
        )
        views.compare_database_button.clicked.connect(
            lambda: self.request_compare(other=views.compare_database.chosen())
        )
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.golden.changed.connect(self._show_file)
        self._set_running(False)
        self.follow_registry()
        self.note.show_note("Reading the golden file…", "neutral")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.golden.loaded:
            self.loading.start(self.load_file())

    async def load_file(self) -> None:
        """Read the golden file and show its checks; its validator (jsonschema) is imported on the window's
        chores thread, not the GUI thread."""
        if not self.golden.loaded:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.services.chores, importlib.import_module, "jsonschema")
            self.golden.load()
        self._show_file()

    def _build_widgets(self) -> None:
        self.file_label = selectable_label("checksFile")
        self.new_button = push_button("New…", "checksNewButton", "Start an empty golden file")
        self.open_button = push_button("Open…", "checksOpenButton", "Work on another golden file")
        self.save_as_button = push_button(
            "Save As…", "checksSaveAsButton", "Write these checks to another file"
        )
        self.remove_button = push_button(
            "Remove", "checksRemoveButton", "Remove the selected checks from the file"
        )
        self.run_button = push_button(
            "Run checks", "checksRunButton", "Run every check through the agent's search"
        )
        self.cancel_button = push_button("Cancel", "checksCancelButton", "Stop the run (Esc)")
        self.engine_combo = engine_combo("checksEngine")
        self.run_button.setDefault(True)
        self.note = StatusNote("checksNote")
        self.undo_button = push_button("Undo", "checksUndoButton", "Put the removed checks back (Ctrl+Z)")
        self.undo_button.hide()
        self.progress = QProgressBar()
        self.progress.setObjectName("checksProgress")
        self.progress.setTextVisible(True)
        self.table = PlaceholderTableView()
        self.table.setObjectName("checksTable")
        self.table.setModel(self.model)
        self.table.setPlaceholder(EMPTY_HINT)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        for column, width in ((RESULT, 110), (1, 110), (QUERY, 260), (3, 50), (EXPECTED, 200), (CHANGE, 170)):
            self.table.setColumnWidth(column, width)
        header.setSectionResizeMode(QUERY, QHeaderView.ResizeMode.Stretch)

    def _note_row(self) -> QHBoxLayout:
        """The note, and Undo beside it after a Remove."""
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.note, 1)
        row.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        return row

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Golden file:"))
        top.addWidget(self.file_label, 1)
        for button in (self.new_button, self.open_button, self.save_as_button):
            top.addWidget(button)
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        for button in (self.run_button, self.cancel_button, self.remove_button):
            actions.addWidget(button)
        actions.addWidget(QLabel("Engine:"))
        actions.addWidget(self.engine_combo)
        actions.addWidget(self.progress, 1)
        actions.addStretch(0)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("checksSplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.table)
        splitter.addWidget(self.views)
        splitter.setSizes([260, 420])  # the checks above, and room for a chart or a comparison below
        # Its wish to be tall (a chart, a long comparison) must not make the page taller than the window:
        # the page scrolls only below its minimum.
        splitter.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        splitter.setMinimumHeight(260)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addLayout(actions)
        layout.addLayout(self._note_row())
        layout.addWidget(splitter, 1)

    # --- what is shown --------------------------------------------------------------------------------

    def _show_file(self) -> None:
        golden = self.golden
        self.file_label.setText(shown_path(golden.path) + ("   (not saved)" if golden.unsaved else ""))
        self.file_label.setToolTip(golden.unsaved or golden.problem or str(golden.path))
        self.model.set_checks(golden.checks, self._places())
        self.remove_button.setEnabled(False)
        self.undo_button.hide()
        self._show_detail()
        if self.running.running:
            return
        if golden.problem is not None:
            self.note.show_note(
                f"{golden.problem}. Checks added now are kept here until you save them (Save As…).", "bad"
            )
        elif golden.unsaved is not None:
            self.note.show_note(
                f"Not saved: {golden.unsaved}. Save the checks to another file (Save As…).", "bad"
            )
        elif not golden.checks:
            self.note.show_note("No golden checks in this file yet.", "neutral")
        elif self.runner.last_run is None:
            self.note.show_note(self._not_run_text(), "neutral")
        self.run_button.setEnabled(bool(golden.checks))

    def _places(self) -> tuple[str, ...]:
        registry = self.services.registry
        return tuple(
            place_text(check, registry) + ("" if check.pin is None else f" at {check.pin.text}")
            for check in self.golden.checks
        )

    def _not_run_text(self) -> str:
        count = len(self.golden.checks)
        text = (
            f"{count:,} check{'s' if count != 1 else ''}: run them to see whether the agent still gets the "
            "expected entries."
        )
        last = core.golden.load_last_run(self.golden.path)
        if last is not None:
            passed = sum(check.passed for check in last.checks.values())
            text += f" Last run {when(last.ran_at)}: {passed} of {len(last.checks)} passed."
        return text

    def _set_running(self, running: bool) -> None:
        # The checks stay as they are while they run: cells are edited between runs.
        self.model.on_edit = None if running else self.editing.edit_cell
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.run_button.setEnabled(not running and self.golden.loaded and bool(self.golden.checks))
        for button in (self.new_button, self.open_button, self.save_as_button, self.engine_combo):
            button.setEnabled(not running)

    def _selected_rows(self) -> list[int]:
        return sorted({index.row() for index in self.table.selectionModel().selectedRows()})

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.remove_button.setEnabled(bool(self._selected_rows()) and not self.running.running)
        self._show_detail()

    def _show_detail(self) -> None:
        rows = self._selected_rows()
        if not rows:
            self.detail.clear()
            return
        row = rows[0]
        text = outcome_text(
            self.model.check(row),
            self.model.outcome(row),
            self.model.change(row),
            self.runner.previous,
            self.model.place(row),
        )
        self.detail.setPlainText(text)

    def _forget_run(self) -> None:
        self.runner.forget()
        self._show_file()

    # --- operations, done by the parts ----------------------------------------------------------------

    def run_checks(self) -> asyncio.Task[bool] | None:
        return self.runner.run_checks()

    def run_on_versions(self) -> asyncio.Task[bool] | None:
        return self.runner.run_on_versions()

    def compare(self, version: int | None = None, other: str | None = None) -> asyncio.Task[bool] | None:
        return self.runner.compare(version, other)

    def find_hubs(self) -> asyncio.Task[bool] | None:
        return self.runner.find_hubs()

    def follow_registry(self) -> None:
        """Offer the registry's databases as B of a comparison; say where each check runs now."""
        if self.golden.loaded:
            self.model.set_places(self._places())
            self._show_detail()
        self.views.compare_database.show_registry(self.services.registry)

    def open_file(self, path: Path) -> bool:
        return self.editing.open_file(path)

    def new_file(self, path: Path) -> bool:
        return self.editing.new_file(path)

    def save_as(self, path: Path) -> bool:
        return self.editing.save_as(path)

    def edit_check(self, check: GoldenCheck, field: str, value: object) -> GoldenCheck | None:
        return self.editing.edit_check(check, field, value)

    # --- slots (thin) ---------------------------------------------------------------------------------

    def request_run(self) -> None:
        self.runner.run_checks()

    def request_hubs(self) -> None:
        self.runner.find_hubs()

    def request_versions(self) -> None:
        self.runner.run_on_versions()

    def request_compare(self, version: int | None = None, other: str | None = None) -> None:
        self.runner.compare(version, other)

    def cancel(self) -> bool:
        """Stop the running checks (Cancel, Esc); ``False`` if none were running."""
        return self.running.cancel()
