"""The Agent log page: what agents asked ``recall-gui mcp`` and got, a call replayed now, and coverage.

The calls come from the agent log (:mod:`recall_gui.core.agents.agent_log`), written by every server a client
started; the page reads it again when its files change (their stamps are polled while the page is shown).
Selecting a call shows its results as the agent got them, each entry's content looked up in the table now;
Replay sends the same arguments through the window's harness and marks ids gained, lost and moved. The
coverage tab splits a database's rows into those the logged calls returned at least once and those never
returned, which are browsed like any rows. Entries open on the knowledge-base page through
``services.navigation``.

The switch and the size bound live in ``settings.json`` (the servers are other processes; they read it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.agents import (
    SHOWN_LOG_BYTES,
    CallRecord,
    LogFiles,
    Stamp,
)
from recall_gui.core.base import (
    TOOL_NAME,
    AppSettings,
    RecallError,
    SettingsStore,
    plural,
)
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.models.call_results_model import CallResultsModel
from recall_gui.qt.models.calls_model import (
    CLIENT,
    DATABASE,
    MS,
    QUERY,
    RESULTS,
    TIME,
    CallsModel,
    local_time,
)
from recall_gui.qt.models.roles import ITEM_ROLE
from recall_gui.qt.pages.log_reading import SHOWN_CALLS, LogBatch, stream_log
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.panels.log_settings import LogSettingsRow
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PlaceholderTableView, push_button, selectable_label

if TYPE_CHECKING:
    from recall_gui.core.agents import Coverage, HubReport
    from recall_gui.core.tables import Page

#: How often the page looks at the log's files while it is shown (two ``stat`` calls a look).
POLL_MS = 1000

HINT_NO_CALLS = (
    "No calls recorded yet. Calls arrive here when an agent searches through recall-gui mcp "
    "(the Agent view's own calls too)."
)
HINT_NO_MATCH = "No call matches the filter."
HINT_PICK = "Select a call to see its results."
HINT_COVERAGE = (
    "Choose a database and press Compute: its entries that no logged call ever returned show here."
)


def _table(name: str, placeholder: str) -> PlaceholderTableView:
    table = PlaceholderTableView()
    table.setObjectName(name)
    table.setPlaceholder(placeholder)
    table.setSelectionMode(PlaceholderTableView.SelectionMode.SingleSelection)
    return table


def hubs_text(report: HubReport, shown: int = 5) -> str:
    """The entries agents got most often (hubs: above a quarter of the calls), or that there are none."""
    hubs = report.hubs(core.agents.DEFAULT_HUB_SHARE)
    if not report.queries:
        return ""
    if not hubs:
        return (
            f"No hub: no entry was returned for more than {core.agents.DEFAULT_HUB_SHARE:.0%} of the calls."
        )
    named = ", ".join(f"{hub.id} ({hub.share:.0%})" for hub in hubs[:shown])
    more = f" and {len(hubs) - shown} more" if len(hubs) > shown else ""
    return f"Hubs, returned for more than {core.agents.DEFAULT_HUB_SHARE:.0%} of the calls: {named}{more}."


class LogPage(QWidget):
    """``logRecordCheck``, ``logMaxSpin``, ``logLocation``, ``logNote``, ``logTabs``; the calls:
    ``logFilter``, ``logCaption``, ``logCallsTable``, ``logCallSummary``, ``logReplayButton``,
    ``logOpenButton``, ``logReplayNote``, ``logResultsTable``; the coverage: ``logCoverageDatabase``,
    ``logCoverageButton``, ``logCoverageSummary``, ``logNeverTable``, ``logNeverOpenButton``."""

    #: The log was read (again) and is shown.
    logLoaded = Signal()
    #: The selected call's entries were looked up in their table (or why not is shown).
    contentsShown = Signal()
    #: A replay finished: its changes (or its error) are shown.
    replayFinished = Signal()
    #: A coverage was computed and its first never-returned rows are shown (or why not).
    coverageFinished = Signal()

    def __init__(
        self,
        services: WindowServices,
        settings: SettingsStore,
        files: LogFiles | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("logPage")
        self.services = services
        self.settings = settings
        self.files = files or LogFiles()
        #: The window holds the newest calls, this many whose records take this much at most; the log may
        #: be far larger.
        self.max_shown_calls, self.max_shown_bytes = SHOWN_CALLS, SHOWN_LOG_BYTES
        self._stamps: tuple[Stamp, Stamp] | None = None
        self._notes: tuple[str, ...] = ()
        self._dropped = 0
        self._selected: CallRecord | None = None
        self.coverage: Coverage | None = None
        self._coverage_outdated = False
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check_files)

        self.settings_row = LogSettingsRow(settings, self.files)
        self.record_check, self.max_spin = self.settings_row.record_check, self.settings_row.max_spin
        self.location = self.settings_row.location
        self.settings_row.changed.connect(lambda: self.save_settings(self.settings_row.chosen()))
        self.note = StatusNote("logNote")
        self.note.hide()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("logTabs")
        self.tabs.addTab(self._calls_tab(), "Calls")
        self.tabs.addTab(self._coverage_tab(), "Coverage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(6)
        layout.addWidget(self.settings_row)
        layout.addWidget(self.note)
        layout.addWidget(self.tabs, 1)
        self._show_settings()
        self._enable_buttons()

    # --- layout ---------------------------------------------------------------------------------------

    def _calls_tab(self) -> QWidget:
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("logFilter")
        self.filter_edit.setPlaceholderText("Filter by client, database or query")
        self.filter_edit.setClearButtonEnabled(True)
        self.caption = QLabel()
        self.caption.setObjectName("logCaption")
        self.progress = QProgressBar()
        self.progress.setObjectName("logProgress")
        self.progress.setRange(0, 1000)
        self.progress.setFormat("reading the log: %p%")
        self.progress.setMinimumWidth(self.fontMetrics().horizontalAdvance("reading the log: 100%") + 32)
        self.progress.hide()
        self.calls_model = CallsModel()
        self.calls_table = _table("logCallsTable", HINT_NO_CALLS)
        self.calls_table.setModel(self.calls_model)
        header = self.calls_table.horizontalHeader()
        for column, width in ((TIME, 140), (CLIENT, 130), (DATABASE, 110), (RESULTS, 60), (MS, 60)):
            self.calls_table.setColumnWidth(column, width)
        header.setSectionResizeMode(QUERY, QHeaderView.ResizeMode.Stretch)
        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.progress)
        top.addWidget(self.caption)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("logSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.calls_table)
        self.splitter.addWidget(self._call_detail())
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([280, 320])
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(6, 8, 6, 6)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.calls_table.selectionModel().currentRowChanged.connect(self._on_call_selected)
        return tab

    def _call_detail(self) -> QWidget:
        """The selected call: what was asked and what came of it, Replay, and its results."""
        self.summary = selectable_label("logCallSummary", wrap=True)
        self.summary.setText(HINT_PICK)
        self.replay_button = push_button(
            "Re&play",
            "logReplayButton",
            "Run the same call now through the window's search and mark what changed",
        )
        self.open_button = push_button(
            "&Open in Knowledge Base", "logOpenButton", "Show the selected entry on the knowledge-base page"
        )
        self.replay_note = StatusNote("logReplayNote")
        self.replay_note.hide()
        self.results_model = CallResultsModel()
        self.results_table = _table("logResultsTable", HINT_PICK)
        self.results_table.setModel(self.results_model)
        for column, width in ((0, 70), (1, 170), (3, 120)):
            self.results_table.setColumnWidth(column, width)
        self.results_table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        detail = QWidget()
        detail_layout = QVBoxLayout(detail)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.setSpacing(6)
        summary_row = QHBoxLayout()
        summary_row.addWidget(self.summary, 1)
        summary_row.addWidget(self.replay_button, 0, Qt.AlignmentFlag.AlignTop)
        summary_row.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignTop)
        detail_layout.addLayout(summary_row)
        detail_layout.addWidget(self.replay_note)
        detail_layout.addWidget(self.results_table, 1)
        self.replay_button.clicked.connect(self.request_replay)
        self.open_button.clicked.connect(self._open_result)
        self.results_table.doubleClicked.connect(lambda _index: self._open_result())
        self.results_table.selectionModel().selectionChanged.connect(lambda *_: self._enable_buttons())
        return detail

    def _coverage_tab(self) -> QWidget:
        self.coverage_database = DatabasePicker(by_activity=False)
        self.coverage_database.setObjectName("logCoverageDatabase")
        self.coverage_database.setMinimumContentsLength(16)
        self.coverage_button = push_button(
            "&Compute",
            "logCoverageButton",
            "Read the database's ids and split them by whether a call returned them",
        )
        self.coverage_summary = QLabel()
        self.coverage_summary.setObjectName("logCoverageSummary")
        self.coverage_summary.setWordWrap(True)
        self.hubs_label = QLabel()
        self.hubs_label.setObjectName("logHubs")
        self.hubs_label.setWordWrap(True)
        self.never_model = BrowseModel(self.services.tasks.start)
        self.never_table = PlaceholderTableView()
        self.never_table.setObjectName("logNeverTable")
        self.never_table.setModel(self.never_model)
        self.never_table.setPlaceholder(HINT_COVERAGE)
        self.never_table.setColumnWidth(0, 70)
        self.never_table.setColumnWidth(1, 170)
        self.never_open_button = push_button(
            "Open in &Knowledge Base",
            "logNeverOpenButton",
            "Show the selected entry on the knowledge-base page",
        )
        row = QHBoxLayout()
        row.addWidget(QLabel("Database"))
        row.addWidget(self.coverage_database)
        row.addWidget(self.coverage_button)
        row.addStretch(1)
        row.addWidget(self.never_open_button)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(6, 8, 6, 6)
        layout.setSpacing(6)
        layout.addLayout(row)
        layout.addWidget(self.coverage_summary)
        layout.addWidget(self.hubs_label)
        layout.addWidget(self.never_table, 1)
        self.coverage_button.clicked.connect(self.request_coverage)
        self.never_open_button.clicked.connect(self._open_never_returned)
        self.never_table.doubleClicked.connect(lambda _index: self._open_never_returned())
        self.never_table.selectionModel().selectionChanged.connect(lambda *_: self._enable_buttons())
        self.never_model.modelReset.connect(self._fit_never_columns)
        return tab

    def _fit_never_columns(self) -> None:
        header = self.never_table.horizontalHeader()
        self.never_table.setColumnWidth(0, 70)
        self.never_table.setColumnWidth(1, 170)
        if header.count() > 2:
            header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

    # --- the settings -----------------------------------------------------------------------------------

    def _show_settings(self) -> None:
        self._settings_problems = self.settings_row.show_saved()
        self._show_note()

    def _show_note(self) -> None:
        lines = [*self._settings_problems, *(f"Skipped in the log: {note}" for note in self._notes)]
        if self._dropped:
            lines.append(
                f"Only the newest {self.calls_model.held:,} calls are shown, and counted by "
                f"coverage: {self._dropped:,} older ones are left out (recall-gui log lists them all)."
            )
        if lines:
            self.note.show_note("\n".join(lines), "warning")
            self.note.show()
        else:
            self.note.hide()

    def save_settings(self, settings: AppSettings) -> None:
        try:
            self.settings.save(settings)
        except OSError as error:
            self.services.show_error(error)
        self._show_settings()

    # --- the log ------------------------------------------------------------------------------------------

    async def reload(self) -> None:
        """Read the log on a worker, a batch at a time (it may take a gigabyte): the first time into the
        table as the calls come, later (calls arrived, the files rotated) beside it, shown once read."""
        stamps = self.files.stamps()
        model, live = self.calls_model, self.calls_model.held == 0
        staged: list[CallRecord] = []
        last: list[LogBatch] = []

        def take(batch: LogBatch) -> None:
            last[:] = [batch]
            if live:
                model.add_newer(batch.added, batch.dropped)
            else:
                del staged[: batch.dropped]
                staged.extend(batch.added)
            if not batch.done:
                self.progress.setValue(round(1000 * batch.share))
                self.progress.show()
            self._show_caption()

        try:
            await stream_log(
                self.files,
                self.services.chores,
                take,
                max_calls=self.max_shown_calls,
                max_bytes=self.max_shown_bytes,
            )
        finally:
            self.progress.hide()
        changed = live and model.held > 0
        if not live:
            changed = tuple(staged) != model.records
            model.set_records(staged)
        self._stamps = stamps
        self._notes, self._dropped = (last[0].notes, last[0].left_out) if last else ((), 0)
        self._show_caption()
        self._show_note()
        if self._selected is not None and self.calls_table.selectionModel().currentIndex().isValid() is False:
            self._select(self._selected)
        if self.coverage is not None and changed and not self._coverage_outdated:
            # Not computed again by itself: that would reset the rows the user is browsing.
            self._coverage_outdated = True
            self.coverage_summary.setText(
                self.coverage_summary.text() + " Calls arrived since: press Compute to count them too."
            )
        self.logLoaded.emit()

    def _show_caption(self) -> None:
        total, shown = self.calls_model.held, self.calls_model.rowCount()
        window = self.calls_model.from_window
        if total == shown and window:
            self.caption.setText(
                f"{plural(total - window, 'call')} by agents and {window:,} by this window's Agent view "
                "(not counted as agents'), newest first"
            )
        elif total == shown:
            self.caption.setText(f"{plural(total, 'call')}, newest first")
        else:
            self.caption.setText(f"{shown:,} of {plural(total, 'call')}")
        self.calls_table.setPlaceholder(HINT_NO_MATCH if total else HINT_NO_CALLS)

    def _check_files(self) -> None:
        if self.files.stamps() != self._stamps and not self.services.tasks.running("log-reload"):
            self.request_reload()

    def _select(self, record: CallRecord) -> None:
        row = self.calls_model.row_of(record)
        if row is None:
            return
        index = self.calls_model.index(row, 0)
        if index.isValid():
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            self.calls_table.selectionModel().setCurrentIndex(index, flags)

    # --- one call ---------------------------------------------------------------------------------------

    def select_row(self, row: int) -> CallRecord:
        """Select the call in view row ``row`` (0 is the newest shown); returns it."""
        index = self.calls_model.index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.calls_table.selectionModel().setCurrentIndex(index, flags)
        record = index.data(ITEM_ROLE)
        assert isinstance(record, CallRecord)
        return record

    def _call_summary(self, record: CallRecord) -> str:
        """What the agent sent (the row above says who and when) and what came of it."""
        tool = "" if record.tool == TOOL_NAME else f"{record.tool} "
        head = f"Sent: {tool}{json.dumps(record.arguments, ensure_ascii=False)}"
        if record.error is not None:
            return f"{head}\nThe agent got an error: {record.error}"
        parts = [plural(len(record.result_ids), "result")]
        if record.table_version is not None:
            parts.append(f"table version {record.table_version}")
        if record.embed_ms is not None and record.search_ms is not None:
            parts.append(f"embedding {record.embed_ms:.1f} ms, search {record.search_ms:.1f} ms")
        if record.shortened:
            parts.append("shortened to fit the log")
        return f"{head}\n" + " · ".join(parts)

    def show_call(self, record: CallRecord | None) -> None:
        """Show ``record``'s results as logged and start looking their contents up."""
        self._selected = record
        self.replay_note.hide()
        self.services.tasks.cancel("log-replay")
        if record is None:
            self.summary.setText(HINT_PICK)
            self.results_model.show_logged(())
            self.results_table.setPlaceholder(HINT_PICK)
        else:
            self.summary.setText(self._call_summary(record))
            self.results_model.show_logged(record.result_ids)
            self.results_table.setPlaceholder("The agent got no results." if record.error is None else "")
            self.services.tasks.start(self.look_up(record, record.result_ids), key="log-lookup")
        self._enable_buttons()

    async def look_up(self, record: CallRecord, ids: tuple[str, ...]) -> None:
        """The entries' contents as the table holds them now, shown while ``record`` is still selected."""
        entry = self.services.registry.get(record.db_name) if record.db_name else None
        contents: dict[str, str] = {}
        problem = None
        if entry is None and ids:
            problem = f"{record.db_name} is not in the window's registry: contents cannot be looked up."
        elif ids and entry is not None:
            try:
                contents = await core.agents.lookup_contents(await self.services.session(), entry.target, ids)
            except RecallError as error:
                problem = f"The contents cannot be looked up: {error.message}"
        if record is not self._selected:
            return
        if problem is not None:
            self.replay_note.show_note(problem, "warning")
            self.replay_note.show()
        else:
            self.results_model.set_contents(contents)
        self.contentsShown.emit()

    async def replay(self, record: CallRecord) -> None:
        """Send the call's arguments through the window's harness now and mark what changed."""
        self.replay_note.show_note("Replaying the call…", "neutral")
        self.replay_note.show()
        done = await core.agents.replay(await self.services.harness(), record)
        if record is not self._selected:
            return
        self.results_model.show_replay(done.diff)
        if done.error is not None:
            self.replay_note.show_note(f"Replayed now, the call fails: {done.error}", "bad")
        else:
            assert done.report is not None
            result = done.report.result
            version = ""
            if record.table_version is not None and result.table_version != record.table_version:
                version = f" (table version {record.table_version} then, {result.table_version} now)"
            if done.diff.changed:
                self.replay_note.show_note(f"Replayed now: {done.diff.summary}{version}.", "warning")
            else:
                self.replay_note.show_note(
                    f"Replayed now: {done.diff.summary} as the agent got{version}.", "good"
                )
        self.replayFinished.emit()
        await self.look_up(record, self.results_model.ids)

    # --- coverage ----------------------------------------------------------------------------------------

    def _show_databases(self) -> None:
        self.coverage_database.show_registry(self.services.registry)
        self.coverage_button.setEnabled(self.coverage_database.count() > 0)

    def follow_registry(self) -> None:
        """After the registry was read again: offer its databases for coverage."""
        self._show_databases()

    async def compute_coverage(self, name: str) -> None:
        """Split ``name``'s rows by whether a logged call returned them; show the never-returned ones."""
        entry = self.services.registry.get(name)
        if entry is None:
            self.coverage_summary.setText(f"{name} is not in the registry.")
            self.coverageFinished.emit()
            return
        self.coverage_summary.setText(f"Reading the ids of {name}…")
        session = await self.services.session()
        try:
            found = await core.agents.coverage(session, entry, self.calls_model.records)
            metadata = (await core.tables.describe_table(session, entry.target)).metadata_columns
        except RecallError as error:
            self.coverage = None
            self.never_model.reset(None)
            self.coverage_summary.setText(f"The coverage of {name} cannot be computed: {error.message}")
            self.coverageFinished.emit()
            return
        self.coverage = found
        self._coverage_outdated = False
        rows = found.never_returned_rows

        async def fetch(offset: int, limit: int) -> Page:
            return await core.agents.rows_by_row_id(session, entry.target, rows, offset=offset, limit=limit)

        self.never_model.reset(fetch, metadata)
        self.never_table.setPlaceholder("Every entry was returned at least once." if found.entries else "")
        await self.never_model.load_first_page()
        share = f" ({found.returned / found.entries:.0%})" if found.entries else ""
        first = next((record for record in self.calls_model.records if not record.from_window), None)
        since = f" since {local_time(first)}" if first is not None else ""
        self.coverage_summary.setText(
            f"{found.returned:,} of {found.entries:,} entries{share} of {name} were returned to agents at "
            f"least once by {plural(found.calls, 'call')}{since}; {len(found.never_returned):,} never were"
            + (":" if found.never_returned else ".")
        )
        self.hubs_label.setText(hubs_text(core.agents.hubs_from_log(self.calls_model.records, name)))
        self._enable_buttons()
        self.coverageFinished.emit()

    # --- slots (thin: they read the widgets and start an operation) -------------------------------------

    def request_reload(self) -> None:
        self.services.tasks.start(self.reload(), key="log-reload")

    def request_replay(self) -> None:
        if self._selected is not None:
            self.services.tasks.start(self.replay(self._selected), key="log-replay")

    def request_coverage(self, name: str | None = None) -> None:
        chosen = name if isinstance(name, str) else self.coverage_database.currentText()
        if chosen:
            self.services.tasks.start(self.compute_coverage(chosen), key="log-coverage")

    def _on_filter(self, text: str) -> None:
        self.calls_model.set_filter(text)
        self._show_caption()

    def _on_call_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        record = current.data(ITEM_ROLE) if current.isValid() else None
        if record is not self._selected or record is None:
            self.show_call(record if isinstance(record, CallRecord) else None)

    def _enable_buttons(self) -> None:
        record = self._selected
        self.replay_button.setEnabled(record is not None)
        self.open_button.setEnabled(
            record is not None
            and record.db_name is not None
            and bool(self.results_table.selectionModel().selectedRows())
        )
        self.never_open_button.setEnabled(
            self.coverage is not None and bool(self.never_table.selectionModel().selectedRows())
        )

    def _open_result(self) -> None:
        rows = self.results_table.selectionModel().selectedRows()
        if self._selected is None or self._selected.db_name is None or not rows:
            return
        self.services.navigation.open_entry(
            self._selected.db_name, self.results_model.entry_id(rows[0].row())
        )

    def _open_never_returned(self) -> None:
        rows = self.never_table.selectionModel().selectedRows()
        item = rows[0].data(ITEM_ROLE) if rows else None
        if self.coverage is None or item is None:
            return
        self.services.navigation.open_entry(self.coverage.db_name, item.id)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._show_databases()
        self._show_settings()
        self._check_files()
        self._poll.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._poll.stop()
