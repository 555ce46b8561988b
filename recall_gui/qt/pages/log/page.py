"""The Agent log page: what agents asked ``recall-gui mcp`` and got, a call replayed now, and coverage.

The calls come from the agent log (:mod:`recall_gui.core.agent_log.agent_log`), written by every server a
client started; the page reads it again when its files change (their stamps are polled while the page is
shown). Selecting a call shows its results as the agent got them, each entry's content looked up in the table
now; Replay sends the same arguments through the window's harness and marks ids gained, lost and moved. The
coverage tab splits a database's rows into those the logged calls returned at least once and those never
returned, which are browsed like any rows. Entries open on the knowledge-base page through
``services.navigation``.

The switch and the size bound live in ``settings.json`` (the servers are other processes; they read it).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from recall_gui.core.agent_log import SHOWN_LOG_BYTES, CallRecord, LogFiles, Stamp
from recall_gui.core.base import AppSettings, SettingsStore
from recall_gui.qt.pages.log.calls import CallsTab
from recall_gui.qt.pages.log.coverage import CoverageTab
from recall_gui.qt.pages.log.reading import SHOWN_CALLS, LogBatch, stream_log
from recall_gui.qt.pages.log.verdicts import CallVerdicts
from recall_gui.qt.panels.log_settings import LogSettingsRow
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices

#: How often the page looks at the log's files while it is shown (two ``stat`` calls a look).
POLL_MS = 1000


class LogPage(QWidget):
    """``logRecordCheck``, ``logMaxSpin``, ``logLocation``, ``logNote``, ``logVerdicts``, ``logTabs``; the
    calls and the coverage are parts (``calls``, ``coverage_tab``), each listing its widgets."""

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
        #: Reading the log (a newer reading cancels the older).
        self.reading = services.operations.lane("log-reload")
        #: The window holds the newest calls, this many whose records take this much at most; the log may
        #: be far larger.
        self.max_shown_calls, self.max_shown_bytes = SHOWN_CALLS, SHOWN_LOG_BYTES
        self._stamps: tuple[Stamp, Stamp] | None = None
        self._notes: tuple[str, ...] = ()
        self._dropped = 0
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._check_files)

        self.settings_row = LogSettingsRow(settings, self.files)
        self.record_check, self.max_spin = self.settings_row.record_check, self.settings_row.max_spin
        self.location = self.settings_row.location
        self.settings_row.changed.connect(lambda: self.save_settings(self.settings_row.chosen()))
        self.note = StatusNote("logNote")
        self.note.hide()
        self.calls = CallsTab(
            services, contents_shown=self.contentsShown, replay_finished=self.replayFinished
        )
        self.coverage_tab = CoverageTab(services, self.calls.calls_model, finished=self.coverageFinished)
        #: The calls given entries marked wrong or outdated in a review (``logVerdicts``).
        self.verdicts_note = StatusNote("logVerdicts")
        self.verdicts_note.hide()
        self.verdicts = CallVerdicts(
            services,
            calls=self.calls.calls_model,
            results=self.calls.results_model,
            selected=lambda: self.calls.selected,
            note=self.verdicts_note,
            shown=self.isVisible,
        )
        self.logLoaded.connect(self.verdicts.request)
        self.contentsShown.connect(self.verdicts.show_selected)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("logTabs")
        self.tabs.addTab(self.calls, "Calls")
        self.tabs.addTab(self.coverage_tab, "Coverage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(6)
        layout.addWidget(self.settings_row)
        layout.addWidget(self.note)
        layout.addWidget(self.verdicts_note)
        layout.addWidget(self.tabs, 1)
        self._show_settings()

    # --- the settings -----------------------------------------------------------------------------------

    def _show_settings(self) -> None:
        self._settings_problems = self.settings_row.show_saved()
        self._show_note()

    def _show_note(self) -> None:
        lines = [*self._settings_problems, *(f"Skipped in the log: {note}" for note in self._notes)]
        if self._dropped:
            lines.append(
                f"Only the newest {self.calls.calls_model.held:,} calls are shown, and counted by "
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
        calls = self.calls
        model, live = calls.calls_model, calls.calls_model.held == 0
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
                calls.progress.setValue(round(1000 * batch.share))
                calls.progress.show()
            calls.show_caption()

        try:
            await stream_log(
                self.files,
                self.services.chores,
                take,
                max_calls=self.max_shown_calls,
                max_bytes=self.max_shown_bytes,
            )
        finally:
            calls.progress.hide()
        changed = live and model.held > 0
        if not live:
            changed = tuple(staged) != model.records
            model.set_records(staged)
        self._stamps = stamps
        self._notes, self._dropped = (last[0].notes, last[0].left_out) if last else ((), 0)
        calls.show_caption()
        self._show_note()
        if calls.selected is not None and not calls.calls_table.selectionModel().currentIndex().isValid():
            calls.select(calls.selected)
        if changed:
            self.coverage_tab.calls_arrived()
        self.logLoaded.emit()

    def _check_files(self) -> None:
        if self.files.stamps() != self._stamps and not self.reading.running:
            self.request_reload()

    def follow_registry(self) -> None:
        """After the registry was read again: offer its databases for coverage."""
        self.coverage_tab.show_databases()

    def request_reload(self) -> None:
        self.reading.start(self.reload())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.coverage_tab.show_databases()
        self._show_settings()
        self._check_files()
        if self.verdicts.stale and self.calls.calls_model.held:  # verdicts given while it was hidden
            self.verdicts.request()
        self._poll.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._poll.stop()
