"""The Log page's calls: the calls read from the log (newest first, filtered by client, database or
query), the selected one's arguments and results as the agent got them with each entry's content looked up
in the table now, and Replay, which sends the same arguments through the window's harness and marks ids
gained, lost and moved."""

from __future__ import annotations

import json

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.agent_log import CallRecord
from recall_gui.core.base import TOOL_NAME, RecallError, plural
from recall_gui.qt.models.call_results_model import CallResultsModel
from recall_gui.qt.models.calls_model import CLIENT, DATABASE, MS, QUERY, RESULTS, TIME, CallsModel
from recall_gui.qt.models.roles import ITEM_ROLE
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PlaceholderTableView, push_button, selectable_label

HINT_NO_CALLS = (
    "No calls recorded yet. Calls arrive here when an agent searches through recall-gui mcp "
    "(the Agent view's own calls too)."
)
HINT_NO_MATCH = "No call matches the filter."
HINT_PICK = "Select a call to see its results."


def log_table(name: str, placeholder: str) -> PlaceholderTableView:
    table = PlaceholderTableView()
    table.setObjectName(name)
    table.setPlaceholder(placeholder)
    table.setSelectionMode(PlaceholderTableView.SelectionMode.SingleSelection)
    return table


class CallsTab(QWidget):
    """``logFilter``, ``logCaption``, ``logProgress``, ``logCallsTable``, ``logCallSummary``,
    ``logReplayButton``, ``logOpenButton``, ``logReplayNote`` and ``logResultsTable``."""

    def __init__(
        self,
        services: WindowServices,
        *,
        contents_shown: SignalInstance,
        replay_finished: SignalInstance,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        self._contents_shown = contents_shown
        self._replay_finished = replay_finished
        lane = services.operations.lane
        #: Replaying the selected call, looking up its results' contents (a newer one cancels the older).
        self.replaying, self.looking_up = lane("log-replay"), lane("log-lookup")
        #: The call shown.
        self.selected: CallRecord | None = None
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
        self.calls_model = CallsModel(self)
        self.calls_table = log_table("logCallsTable", HINT_NO_CALLS)
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 8, 6, 6)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.calls_table.selectionModel().currentRowChanged.connect(self._on_call_selected)
        self.enable_buttons()

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
        self.results_model = CallResultsModel(self)
        self.results_table = log_table("logResultsTable", HINT_PICK)
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
        self.results_table.selectionModel().selectionChanged.connect(lambda *_: self.enable_buttons())
        return detail

    def show_caption(self) -> None:
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

    def select(self, record: CallRecord) -> None:
        """Select ``record`` again (the log was read again), if it is still listed."""
        row = self.calls_model.row_of(record)
        if row is None:
            return
        index = self.calls_model.index(row, 0)
        if index.isValid():
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            self.calls_table.selectionModel().setCurrentIndex(index, flags)

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
        self.selected = record
        self.replay_note.hide()
        self.replaying.cancel()
        if record is None:
            self.summary.setText(HINT_PICK)
            self.results_model.show_logged(())
            self.results_table.setPlaceholder(HINT_PICK)
        else:
            self.summary.setText(self._call_summary(record))
            self.results_model.show_logged(record.result_ids)
            self.results_table.setPlaceholder("The agent got no results." if record.error is None else "")
            self.looking_up.start(self.look_up(record, record.result_ids))
        self.enable_buttons()

    async def look_up(self, record: CallRecord, ids: tuple[str, ...]) -> None:
        """The entries' contents as the table holds them now, shown while ``record`` is still selected."""
        entry = self.services.registry.get(record.db_name) if record.db_name else None
        contents: dict[str, str] = {}
        problem = None
        if entry is None and ids:
            problem = f"{record.db_name} is not in the window's registry: contents cannot be looked up."
        elif ids and entry is not None:
            try:
                session = await self.services.session()
                if not self.results_model.replayed:  # where ids repeat, name the results by content
                    repeats = await session.tables.id_repeats(entry.target)
                    named = core.agent_log.named_results(record, repeats)
                    if named != ids and record is self.selected:
                        self.results_model.show_logged(named)
                        ids = named
                contents = await core.agent_log.lookup_contents(session, entry.target, ids)
            except RecallError as error:
                problem = f"The contents cannot be looked up: {error.message}"
        if record is not self.selected:
            return
        if problem is not None:
            self.replay_note.show_note(problem, "warning")
            self.replay_note.show()
        else:
            self.results_model.set_contents(contents)
        self._contents_shown.emit()

    async def replay(self, record: CallRecord) -> None:
        """Send the call's arguments through the window's harness now and mark what changed."""
        self.replay_note.show_note("Replaying the call…", "neutral")
        self.replay_note.show()
        done = await core.agent_log.replay(await self.services.harness(), record)
        if record is not self.selected:
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
        self._replay_finished.emit()
        await self.look_up(record, self.results_model.ids)

    def enable_buttons(self) -> None:
        record = self.selected
        self.replay_button.setEnabled(record is not None)
        self.open_button.setEnabled(
            record is not None
            and record.db_name is not None
            and bool(self.results_table.selectionModel().selectedRows())
        )

    def request_replay(self) -> None:
        if self.selected is not None:
            self.replaying.start(self.replay(self.selected))

    def _on_filter(self, text: str) -> None:
        self.calls_model.set_filter(text)
        self.show_caption()

    def _on_call_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        record = current.data(ITEM_ROLE) if current.isValid() else None
        if record is not self.selected or record is None:
            self.show_call(record if isinstance(record, CallRecord) else None)

    def _open_result(self) -> None:
        rows = self.results_table.selectionModel().selectedRows()
        if self.selected is None or self.selected.db_name is None or not rows:
            return
        self.services.navigation.open_entry(self.selected.db_name, self.results_model.entry_id(rows[0].row()))
