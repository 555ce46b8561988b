"""The Checks page: golden checks (the questions that matter and the entries each must retrieve), run
through the agent's own search, with what changed since the last run.

The golden file is shared with the knowledge page through :class:`~recall_gui.qt.golden_checks.
GoldenChecks` ("Add as golden check" there adds to it). A run is a kept task (Esc or Cancel stops it);
its ranks are kept in the app's data dir (:mod:`recall_gui.core.agents.check_history`) for the next run to
compare with, never beside the golden file or in a knowledge base.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.agents import default_checks_dir, folder_text, place_text
from recall_gui.core.base import GoldenFileError, InvalidInputError, RecallError, quoted
from recall_gui.core.messages import UserMessage
from recall_gui.qt.models.checks_model import CHANGE, EXPECTED, QUERY, RESULT, ChecksModel, rank_text
from recall_gui.qt.panels.check_views import CompareView, HubsView, VersionsView
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import (
    PlaceholderTableView,
    engine_combo,
    group_box,
    push_button,
    selectable_label,
    text_view,
)

if TYPE_CHECKING:
    from recall_gui.core.agents import (
        Change,
        CheckHubs,
        CheckOutcome,
        CheckRun,
        Comparison,
        GoldenCheck,
        LastRun,
        VersionsReport,
    )
    from recall_gui.core.search import Harness

FILE_FILTER = "Golden checks (*.json);;All files (*)"
EMPTY_HINT = (
    "No golden checks yet. On the knowledge page, search for a question that matters, select the rows the "
    "agent must get for it, and press “Add as golden check” (Ctrl+G). Or open a golden file."
)


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def shown_path(path: Path) -> str:
    """``path`` as the page shows it: under the home folder as ``~/…``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def outcome_text(
    check: GoldenCheck,
    outcome: CheckOutcome | None,
    change: Change | None,
    last: LastRun | None,
    place: str = "",
) -> str:
    """The selected check in full: the question, where it runs (``place``), each expected id's rank (and
    last time's), and the ids the agent got, in order."""
    place = place or check.named
    lines = [f"{json.dumps(check.query, ensure_ascii=False)} in {place}, limit {check.limit}"]
    if check.folder is not None:
        lines.append(
            f"The check names the {folder_text(check.folder)}: it runs on the registered database that "
            "reads that table, or on the folder until it is registered."
        )
    if outcome is None:
        lines += ["", "Not run yet. Expected ids:", *(f"  {entry_id}" for entry_id in check.expect)]
        return "\n".join(lines)
    if outcome.searched and outcome.searched != place:
        lines.append(f"The last run searched {outcome.searched}.")
    if outcome.error is not None:
        lines += ["", f"Could not run: {outcome.error}"]
        if outcome.hint:
            lines.append(outcome.hint)
        return "\n".join(lines)
    past = last.checks.get(check.key) if last is not None else None
    width = max(len(entry_id) for entry_id in check.expect)
    lines += ["", "Expected ids:"]
    for expected in outcome.expected:
        before = ""
        if past is not None and expected.id in past.ranks:
            before = f"   (last run: {rank_text(past.ranks[expected.id])})"
        lines.append(f"  {expected.id.ljust(width)}  rank {rank_text(expected.rank)}{before}")
    metrics = outcome.metrics
    if metrics is not None:
        lines += [
            "",
            f"Recall {metrics.recall:.3f} · reciprocal rank {metrics.reciprocal_rank:.3f} · nDCG "
            f"{metrics.ndcg:.3f} (limit {check.limit}, "
            + (
                outcome.searched
                if check.pin is not None
                else f"the latest version of {outcome.searched or place}"
            )
            + ")",
        ]
    if outcome.near_copies:
        from recall_gui.core.agents import crowding_text

        lines += ["", f"Pushed out? {crowding_text(outcome.near_copies)}"]
    if change is not None:
        lines += ["", f"Since the last run: {change.text}"]
    wanted = set(check.expect)
    lines += ["", f"The agent got ({len(outcome.results)}):"]
    lines += [
        f"  {rank:>3}. {found}{'   ← expected' if found in wanted else ''}"
        for rank, found in enumerate(outcome.results, start=1)
    ]
    return "\n".join(lines)


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
        self.model = ChecksModel()
        self.last_run: CheckRun | None = None
        #: The run before the last one, which the last one was compared with.
        self.previous: LastRun | None = None
        #: The checks the last Remove took out, with their places: what Undo puts back.
        self._removed: tuple[tuple[int, GoldenCheck], ...] = ()
        self._build_widgets()
        self._lay_out()
        self.new_button.clicked.connect(self.ask_new)
        self.open_button.clicked.connect(self.ask_open)
        self.save_as_button.clicked.connect(self.ask_save_as)
        self.remove_button.clicked.connect(self.remove_selected)
        self.undo_button.clicked.connect(self.undo_remove)
        undo = QShortcut(QKeySequence(QKeySequence.StandardKey.Undo), self)
        undo.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        undo.activated.connect(self.undo_remove)
        self.run_button.clicked.connect(self.request_run)
        self.cancel_button.clicked.connect(self.cancel)
        self.versions_button.clicked.connect(self.request_versions)
        self.hubs_button.clicked.connect(self.request_hubs)
        self.compare_version_button.clicked.connect(
            lambda: self.request_compare(version=self.compare_version.value())
        )
        self.compare_database_button.clicked.connect(
            lambda: self.request_compare(other=self.compare_database.chosen())
        )
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.golden.changed.connect(self._show_file)
        self._set_running(False)
        self.follow_registry()
        self.note.show_note("Reading the golden file…", "neutral")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.golden.loaded:
            self.services.tasks.start(self.load_file(), key="checks-load")

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
        self.detail = text_view("checkDetail", read_only=True, monospace=True)
        self.detail.setPlaceholderText("Select a check to see the ranks and the results the agent got.")
        self.versions_view = VersionsView()
        self.versions_button = push_button(
            "Run on every version", "checksVersionsButton", "Run the checks on each version still on disk"
        )
        self.compare_view = CompareView()
        self.compare_version = QSpinBox()
        self.compare_version.setObjectName("checksCompareVersion")
        self.compare_version.setRange(1, 10**9)
        self.compare_version_button = push_button(
            "Compare version with the latest", "checksCompareVersionButton", "A: that version, B: the latest"
        )
        self.compare_database = DatabasePicker()
        self.compare_database.setObjectName("checksCompareDatabase")
        self.compare_database_button = push_button(
            "Compare with this database",
            "checksCompareDatabaseButton",
            "A: each check's database, B: this one (the same ids, e.g. another model) with its own model",
        )
        self.hubs_view = HubsView()
        self.hubs_button = push_button(
            "Find hubs",
            "checksHubsButton",
            "Search each check's query as the agent does and count what returns",
        )

    def _note_row(self) -> QHBoxLayout:
        """The note, and Undo beside it after a Remove."""
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.note, 1)
        row.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        return row

    def _views(self) -> QTabWidget:
        """Below the checks: the selected check, the metrics across versions, A/B, and hubs."""
        below = QTabWidget()
        below.setObjectName("checksViews")
        below.setDocumentMode(True)
        below.addTab(group_box("Selected check", [(self.detail, 1)]), "Selected check")
        below.addTab(_view_tab([self.versions_button], self.versions_view), "Versions")
        compare_controls: list[QWidget | int] = [
            QLabel("Version:"),
            self.compare_version,
            self.compare_version_button,
            16,
            self.compare_database,
            self.compare_database_button,
        ]
        below.addTab(_view_tab(compare_controls, self.compare_view, stretch=self.compare_database), "Compare")
        below.addTab(_view_tab([self.hubs_button], self.hubs_view), "Hubs")
        return below

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
        below = self._views()
        self.views = below
        splitter.addWidget(below)
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
        if self.services.tasks.running("checks"):
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
        elif self.last_run is None:
            self.note.show_note(self._not_run_text(), "neutral")
        self.run_button.setEnabled(bool(golden.checks))

    def _places(self) -> tuple[str, ...]:
        registry = self.services.registry
        return tuple(
            place_text(check, registry) + ("" if check.pin is None else f" at {check.pin.text}")
            for check in self.golden.checks
        )

    def _not_run_text(self) -> str:
        from recall_gui.core.agents import load_last_run

        count = len(self.golden.checks)
        text = (
            f"{count:,} check{'s' if count != 1 else ''}: run them to see whether the agent still gets the "
            "expected entries."
        )
        last = load_last_run(self.golden.path)
        if last is not None:
            passed = sum(check.passed for check in last.checks.values())
            text += f" Last run {_when(last.ran_at)}: {passed} of {len(last.checks)} passed."
        return text

    def _set_running(self, running: bool) -> None:
        # The checks stay as they are while they run: cells are edited between runs.
        self.model.on_edit = None if running else self._edit_cell
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.run_button.setEnabled(not running and self.golden.loaded and bool(self.golden.checks))
        for button in (self.new_button, self.open_button, self.save_as_button, self.engine_combo):
            button.setEnabled(not running)

    def _selected_rows(self) -> list[int]:
        return sorted({index.row() for index in self.table.selectionModel().selectedRows()})

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.remove_button.setEnabled(
            bool(self._selected_rows()) and not self.services.tasks.running("checks")
        )
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
            self.previous,
            self.model.place(row),
        )
        self.detail.setPlainText(text)

    # --- operations -----------------------------------------------------------------------------------

    async def run_checks(self) -> CheckRun | None:
        """Run every check of the golden file through the agent's search; show pass/fail, the ranks and
        what moved since the last run, then keep this run for the next one to compare with."""
        from recall_gui.core.agents import change_since, load_last_run, save_run

        golden = self.golden
        checks, path = golden.checks, golden.path
        if not checks:
            return None
        self._set_running(True)
        self.progress.setRange(0, len(checks))
        self.progress.setValue(0)
        self.progress.setFormat(f"%v of {len(checks)} checks")
        self.note.show_note(f"Running {len(checks):,} checks…", "neutral")
        self.services.set_activity("Running golden checks…")
        started = time.perf_counter()
        try:
            previous = load_last_run(path)
            harness = await self.services.harness()
            run = await self._engine_run(harness, checks)
        except RecallError as error:  # the Ray engine could not start (the local one reports per check)
            self.note.show_note(error.full_text(), "bad")
            self.services.set_activity("Ready")
            self.runFinished.emit()
            return None
        except asyncio.CancelledError:
            self.note.show_note(
                f"Cancelled after {self.progress.value()} of {len(checks)} checks; nothing was kept.",
                "warning",
            )
            self.services.set_activity("Golden checks cancelled")
            self.runFinished.emit()
            raise
        finally:
            self._set_running(False)
        elapsed = time.perf_counter() - started
        changes = tuple(change_since(outcome, previous) for outcome in run.outcomes)
        self.last_run, self.previous = run, previous
        self.model.set_outcomes(run.outcomes, changes)
        self._show_detail()
        try:
            save_run(path, run)
        except OSError as error:
            self.services.show_message(
                UserMessage(
                    f"This run's ranks could not be kept for the next run to compare with: {error}",
                    "Check that the app's data folder can be written.",
                    "warning",
                )
            )
        self._show_summary(run, changes, previous, elapsed)
        self.services.set_activity(f"Golden checks: {run.passed} of {len(run.outcomes)} passed")
        self.runFinished.emit()
        return run

    async def _engine_run(self, harness: Harness, checks: Sequence[GoldenCheck]) -> CheckRun:
        """The checks on the engine chosen: this process's harness, or Ray."""
        from recall_gui.core.agents import run_checks

        def progress(done: int, _total: int) -> None:
            self.progress.setValue(done)

        if self.engine_combo.currentData() != "ray":
            from recall_gui.core.agents import with_crowding

            return await with_crowding(harness, await run_checks(harness, checks, progress))
        from recall_gui.core.agents import run_checks_in_ray
        from recall_gui.core.base import window_address

        return await run_checks_in_ray(harness.registry_dir, checks, progress, address=window_address())

    def _show_summary(
        self, run: CheckRun, changes: tuple[Change, ...], previous: LastRun | None, elapsed: float
    ) -> None:
        parts = [f"{run.passed} passed", f"{run.failed} failed"]
        if run.errors:
            parts.append(f"{run.errors} could not run")
        count = len(run.outcomes)
        text = f"Ran {count:,} check{'s' if count != 1 else ''} in {elapsed:.1f} s: {', '.join(parts)}."
        if previous is not None:
            moved = sum(change.kind not in ("same", "new") for change in changes)
            text += f" Since the run of {_when(previous.ran_at)}: {moved or 'nothing'} changed."
        means = run.metrics
        if means is not None:
            text += f" Means: {means.describe()}, each at its check's limit on the latest version."
        self.note.show_note(text, "good" if run.failed == 0 and run.errors == 0 else "bad")

    async def run_on_versions(self) -> VersionsReport | None:
        """Every check on every version of its table still on disk (read-only checkouts), charted."""
        from recall_gui.core.agents import run_on_versions

        checks = self.golden.checks
        if not checks:
            return None
        self.versions_view.note.setText(f"Running {len(checks):,} checks on every version…")
        report = await run_on_versions(await self.services.harness(), checks, progress=self.versions_view)
        self.versions_view.show_report(report)
        self.runFinished.emit()
        return report

    async def compare(self, version: int | None = None, other: str | None = None) -> Comparison | None:
        """A/B: A is each check's database at ``version`` (or its latest), B the latest (or ``other``)."""
        from recall_gui.core.agents import compare_checks

        checks = self.golden.checks
        entry = self.services.registry.get(other) if other is not None else None
        if not checks or (other is not None and entry is None):
            return None
        self.compare_view.note.setText(f"Comparing {len(checks):,} checks…")
        comparison = await compare_checks(await self.services.harness(), checks, version=version, other=entry)
        a_label = f"version {version}" if version is not None else "each check's database, latest"
        b_label = "the latest version" if other is None else f"{other}, latest, with its own model"
        self.compare_view.show_comparison(comparison, a_label, b_label)
        self.runFinished.emit()
        return comparison

    async def find_hubs(self) -> tuple[CheckHubs, ...] | None:
        """The entries the agent's search returns for many of the file's queries, per database."""
        from recall_gui.core.agents import DEFAULT_HUB_SHARE, hubs_of_checks

        checks = self.golden.checks
        if not checks:
            return None
        self.hubs_view.note.setText(f"Searching {len(checks):,} queries as the agent does…")

        def progress(done: int, total: int) -> None:
            self.hubs_view.note.setText(f"Searched {done:,} of {total:,} queries…")

        found = await hubs_of_checks(await self.services.harness(), checks, progress)
        self.hubs_view.show_hubs(found, DEFAULT_HUB_SHARE)
        self.runFinished.emit()
        return found

    def request_hubs(self) -> None:
        self.services.tasks.start(self.find_hubs(), key="checks")

    def request_versions(self) -> None:
        self.services.tasks.start(self.run_on_versions(), key="checks")

    def request_compare(self, version: int | None = None, other: str | None = None) -> None:
        self.services.tasks.start(self.compare(version, other), key="checks")

    def follow_registry(self) -> None:
        """Offer the registry's databases as B of a comparison; say where each check runs now."""
        if self.golden.loaded:
            self.model.set_places(self._places())
            self._show_detail()
        self.compare_database.show_registry(self.services.registry)

    def open_file(self, path: Path) -> bool:
        try:
            self.golden.open(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        self._forget_run()
        return True

    def new_file(self, path: Path) -> bool:
        try:
            self.golden.new(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        self._forget_run()
        return True

    def save_as(self, path: Path) -> bool:
        try:
            self.golden.save_as(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        return True

    def _forget_run(self) -> None:
        self.last_run, self.previous = None, None
        self.model.set_outcomes((), ())
        self._show_file()

    def remove_selected(self) -> None:
        """Remove the selected checks from the file; the note offers to put them back (Undo, Ctrl+Z)."""
        keys = [self.model.check(row).key for row in self._selected_rows()]
        if not keys:
            return
        try:
            removed = self.golden.remove(keys)
        except GoldenFileError as error:
            self.services.show_error(error)
            return
        self._removed = removed
        what = f"the check {quoted(removed[0][1].query)}" if len(removed) == 1 else f"{len(removed):,} checks"
        self.note.show_note(f"Removed {what} from {self.golden.path.name}.", "neutral")
        self.undo_button.show()

    def undo_remove(self) -> None:
        """Put the checks the last Remove took out back in their places."""
        if not self._removed or self.undo_button.isHidden():
            return
        removed, self._removed = self._removed, ()
        try:
            self.golden.restore(removed)
        except GoldenFileError as error:
            self.services.show_error(error)
            return
        count = len(removed)
        self.note.show_note(f"Put back {count:,} check{'s' if count != 1 else ''}.", "neutral")

    def _edit_cell(self, row: int, field: str, value: object) -> bool:
        """An edit typed in a cell; applied once the editor has closed (the table is shown again then)."""
        check = self.model.check(row)
        QTimer.singleShot(0, lambda: self.edit_check(check, field, value))
        return True

    def edit_check(self, check: GoldenCheck, field: str, value: object) -> GoldenCheck | None:
        """``check`` with its query, ids (comma-separated text) or limit changed, written to the golden
        file in its place; a value it cannot take is refused with the reason and changes nothing."""
        from recall_gui.core.agents import edited

        try:
            if field == "limit":
                if not isinstance(value, int) or isinstance(value, bool):
                    raise InvalidInputError(f"the limit must be a whole number, not {value!r}")
                new = edited(check, limit=value)
            elif field == "query":
                new = edited(check, query=str(value))
            else:
                new = edited(check, ids=str(value))
            if new != check:
                self.golden.edit(check.key, new)
        except InvalidInputError as error:
            unsaved = self.golden.unsaved is not None and isinstance(error, GoldenFileError)
            message = error.message if unsaved else f"The check was not changed: {error.message}"
            self.services.show_message(UserMessage(message, error.hint, "warning"))
            self.editFinished.emit()
            return None
        self.editFinished.emit()
        return new

    # --- slots (thin) ---------------------------------------------------------------------------------

    def request_run(self) -> None:
        self.services.tasks.start(self.run_checks(), key="checks")

    def cancel(self) -> bool:
        """Stop the running checks (Cancel, Esc); ``False`` if none were running."""
        return self.services.tasks.cancel("checks")

    def _folder(self) -> str:
        folder = self.golden.path.parent if self.golden.path.parent.is_dir() else default_checks_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)

    def ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a golden file", self._folder(), FILE_FILTER)
        if path:
            self.open_file(Path(path))

    def ask_new(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "New golden file", self._folder(), FILE_FILTER)
        if path:
            self.new_file(Path(path))

    def ask_save_as(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the checks as", self._folder(), FILE_FILTER)
        if path:
            self.save_as(Path(path))


def _view_tab(controls: list[QWidget | int], view: QWidget, stretch: QWidget | None = None) -> QWidget:
    """A tab of the views below the checks: a row of ``controls`` (an int is a space that many pixels
    wide; ``stretch`` takes the row's spare width, else the row's end does) above ``view``."""
    tab = QWidget()
    layout = QVBoxLayout(tab)
    layout.setContentsMargins(0, 4, 0, 0)
    row = QHBoxLayout()
    for control in controls:
        if isinstance(control, int):
            row.addSpacing(control)
        else:
            row.addWidget(control, 1 if control is stretch else 0)
    if stretch is None:
        row.addStretch(1)
    layout.addLayout(row)
    layout.addWidget(view, 1)
    return tab
