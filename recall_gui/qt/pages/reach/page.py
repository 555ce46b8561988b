"""The Reach page: which entries of a database the agent can never return, even asked about exactly what
they say (:mod:`recall_gui.core.reach.reach`), what takes their place and why; and how evenly the agent's
results spread over the entries (a Lorenz curve or a histogram of retrievability).

The report runs in the page's lane with progress (:mod:`recall_gui.qt.panels.report_run`); Cancel stops
it between jobs. Each listed entry opens like any entry (double-click), and its query can be kept as a
golden check (it fails until the entry is reached). Nothing is written to the knowledge base.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import DEFAULT_LIMIT, GoldenFileError, RecallError, method_words, quoted
from recall_gui.core.messages import UserMessage
from recall_gui.qt.models.reach_model import QUERY, RANK, ReachModel
from recall_gui.qt.models.roles import ITEM_ROLE, VALUE_ROLE
from recall_gui.qt.panels.report_run import ReportRun
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PlaceholderTableView, engine_combo, push_button

if TYPE_CHECKING:
    from recall_gui.core.golden import GoldenCheck
    from recall_gui.core.reach import ReachReport, Unreachable
    from recall_gui.qt.panels.reach_chart import ReachChart

#: The ways to make each entry's query, as the page offers them (a column is typed: ``column:NAME``).
RULE_ITEMS = (
    ("first sentence", "first-sentence"),
    ("first line", "first-line"),
    ("whole text", "whole-text"),
)
CHART_MODULE = "recall_gui.qt.panels.reach_chart"
INTRODUCTION = (
    "Ask for every entry by its own first sentence, as the agent searches: the entries it never returns are "
    "listed with what takes their place and why, as they are found. Double-click one to open it."
)


def summary(report: ReachReport) -> str:
    """The note above the table, in words."""
    asked_by = report.query_from.replace("-", " ")
    model = report.model.used if report.model is not None else "no model"
    text = (
        f"{report.db_name}: {len(report.unreachable):,} of {report.entries:,} entries are out of the agent's "
        f"reach (limit {report.limit}); {report.reachable:,} of {report.searched:,} asked for by their "
        f"{asked_by} are found. {report.antihubs:,} are returned for no query; {len(report.hubs):,} for "
        f"{report.hub_min:,} or more (hubs). {method_words(report.method).capitalize()}, {model}."
    )
    if not report.agent_searches:
        text += f" No agent searches {report.db_name} now: {report.why_not}."
    if report.note:
        text += f" {report.note[:1].upper()}{report.note[1:]}."
    said = report.repeats.sentence()
    if said is not None:
        text += f" {said[:1].upper()}{said[1:]}."
    return text


class ReachPage(QWidget):
    """``reachDatabase``, ``reachLimit``, ``reachQueryFrom``, ``reachEngine``, ``reachRunButton``,
    ``reachCancelButton``, ``reachProgress``, ``reachNote``, ``reachTable`` (the unreachable entries,
    sortable), ``reachOpenButton``, ``reachGoldenButton`` and the chart (``reachChart``)."""

    #: A report finished (or was cancelled, or failed): the note says how.
    reportFinished = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reachPage")
        self.services = services
        self.report: ReachReport | None = None
        #: The database and limit of the entries listed: the report's, or the run's that lists them as
        #: they are found.
        self.listed: tuple[str, int] | None = None
        #: The entries asked for so far of how many, in the run under way.
        self._asked = (0, 0)
        self.chart: ReachChart | None = None
        #: Whether the table has moved on since the report shown: its latest version, asked for again
        #: when the page is shown and after F5.
        self.checking_latest = services.operations.lane("reach-latest")
        self._build_widgets()
        self._lay_out()
        self.report_run.finished.connect(self.reportFinished)
        self.report_run.runningChanged.connect(self._on_running)
        self.run_button.clicked.connect(self.request_report)
        self.open_button.clicked.connect(self.open_selected)
        self.golden_button.clicked.connect(self.add_golden_check)
        self.table.doubleClicked.connect(self._on_activated)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.database_combo.currentIndexChanged.connect(self._on_database_changed)
        self.database_combo.follow(services.drafts)
        self.follow_registry()
        self.note.show_note(INTRODUCTION, "neutral")

    def _build_widgets(self) -> None:
        #: The controls and the report being made (a newer one cancels it).
        self.report_run = report_run = ReportRun(
            self.services.operations,
            "reach",
            run=(
                "Check reach",
                "reachRunButton",
                "Ask for every entry by its own text, as the agent searches",
            ),
            cancel_tip="Stop the report",
            set_activity=self.services.page_activity(self),
            parent=self,
        )
        self.database_combo, self.run_button, self.cancel_button, self.progress, self.note = (
            report_run.widgets()
        )
        self.database_combo.setMinimumWidth(120)
        self.limit_spin = QSpinBox()
        self.limit_spin.setObjectName("reachLimit")
        self.limit_spin.setRange(1, 100)
        self.limit_spin.setValue(DEFAULT_LIMIT)
        self.limit_spin.setToolTip("The agent's limit: how many results each query gets")
        self.rule_combo = QComboBox()
        self.rule_combo.setObjectName("reachQueryFrom")
        self.rule_combo.setEditable(True)
        self.rule_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        for label, rule in RULE_ITEMS:
            self.rule_combo.addItem(label, rule)
        self.rule_combo.setToolTip(
            "What each entry is asked for by: its first sentence (a chunk's heading when it starts with "
            "one), its first line, its whole text, or a column typed as column:NAME (e.g. column:title)"
        )
        self.engine_combo = engine_combo("reachEngine")
        report_run.inputs += [self.limit_spin, self.rule_combo, self.engine_combo]
        self.model = ReachModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(VALUE_ROLE)
        self.table = PlaceholderTableView()
        self.table.setObjectName("reachTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionMode(PlaceholderTableView.SelectionMode.SingleSelection)
        self.table.setPlaceholder("Unreachable entries are listed here.")
        self.table.setMinimumSize(200, 80)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in ((0, 110), (RANK, 50), (2, 90), (QUERY, 200), (4, 110)):
            self.table.setColumnWidth(column, width)
        self.open_button = push_button("Open entry", "reachOpenButton", "Open the selected entry")
        self.golden_button = push_button(
            "Add as golden check",
            "reachGoldenButton",
            "Keep its query as a golden check that expects it: the check fails until the agent reaches it",
        )
        self.chart_placeholder = QLabel("The spread of the agent's results over the entries shows here.")
        self.chart_placeholder.setWordWrap(True)
        self.chart_placeholder.setEnabled(False)
        self.chart_placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def _lay_out(self) -> None:
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        for label, widget in (
            ("Database:", self.database_combo),
            ("Limit:", self.limit_spin),
            ("Ask by:", self.rule_combo),
            ("Engine:", self.engine_combo),
        ):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget, 1 if widget is self.database_combo else 0)
        controls.addStretch(0)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.open_button)
        actions.addWidget(self.golden_button)
        actions.addStretch(1)
        listing = QWidget()
        listing_layout = QVBoxLayout(listing)
        listing_layout.setContentsMargins(0, 0, 0, 0)
        listing_layout.addWidget(self.table, 1)
        listing_layout.addLayout(actions)
        self.chart_area = QWidget()
        self.chart_layout = QVBoxLayout(self.chart_area)
        self.chart_layout.setContentsMargins(0, 0, 0, 0)
        self.chart_layout.addWidget(self.chart_placeholder, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("reachSplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(listing)
        splitter.addWidget(self.chart_area)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([750, 450])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        layout.addWidget(self.progress)
        layout.addWidget(splitter, 1)

    # --- the registry and the controls ----------------------------------------------------------------

    def follow_registry(self) -> None:
        """List the registry's databases (active ones first), keeping the one chosen while it is listed;
        then ask whether the report's table has moved on (F5 comes here too)."""
        self.report_run.follow_registry(self.services.registry)
        self._on_database_changed()
        self.request_latest()

    def _on_database_changed(self) -> None:
        """Another database chosen: what was listed of the one before is no longer shown as if it were its."""
        if self.listed is not None and self.database_combo.chosen() != self.listed[0]:
            self._forget_report()
            self.note.show_note(INTRODUCTION, "neutral")

    def choose_database(self, name: str) -> None:
        self.database_combo.choose(name)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.request_latest()

    def request_latest(self) -> None:
        """Ask in the background whether the report's table has a newer version than the report's."""
        if self.report is not None and not self.report_run.running:
            self.checking_latest.start(self.check_latest(self.report))

    async def check_latest(self, report: ReachReport) -> int | None:
        """The latest version of ``report``'s table, said in the note when the report is of an older one
        (``None``: it could not be read, or the database is gone)."""
        entry = self.services.registry.get(report.db_name)
        if entry is None:
            return None
        try:
            latest = await core.tables.latest_version(await self.services.session(), entry.target)
        except RecallError:
            return None  # the next report says what is wrong with the table
        if report is self.report and latest > report.version and not self.report_run.running:
            self.note.show_note(
                f"This report is of version {report.version} of {report.db_name}; the table is at version "
                f"{latest} now, so it may no longer hold: check reach again. " + summary(report),
                "warning",
            )
        return latest

    def chosen_rule(self) -> str:
        """The rule chosen from the list, else the text typed (``column:NAME``)."""
        text = self.rule_combo.currentText().strip()
        for label, rule in RULE_ITEMS:
            if text == label:
                return rule
        return text

    def _on_running(self, running: bool) -> None:
        self.cancel_button.setVisible(running)
        self._on_selection()

    def _on_progress(self, stage: str, done: int, total: int) -> None:
        self.progress.setRange(0, total)  # 0 and 0: busy, no count yet
        self.progress.setValue(done)
        if stage == core.reach.SEARCHING:
            self._asked = (done, total)
        found = self.model.rowCount()
        so_far = f" · {found:,} out of reach so far" if found else ""
        self.progress.setFormat((f"{stage}: %v of %m" if total else stage) + so_far)

    def _on_found(self, found: tuple[Unreachable, ...]) -> None:
        """Entries found out of reach while the report is made: listed at once."""
        self.model.add(found)
        self.table.setPlaceholder("")

    # --- operations -----------------------------------------------------------------------------------

    def check(self, name: str, limit: int, rule: str, engine: str = "local") -> asyncio.Task[bool] | None:
        """Make the reach report of the database ``name`` and show it (``None``: no such database)."""
        entry, services = self.services.registry.get(name), self.services
        if entry is None:
            self.note.show_note(f"{name} is no longer registered: choose another database.", "warning")
            self.reportFinished.emit()
            return None

        self._forget_report()  # the new report's entries are listed as they are found
        self.model.show((), max(limit, core.reach.DEFAULT_DEPTH))  # the depth the report looks to
        self.listed, self._asked = (name, limit), (0, 0)
        listing = self.listed

        def found_now(found: tuple[Unreachable, ...]) -> None:
            if self.listed is listing:  # a newer run, or another database, lists its own
                self._on_found(found)

        async def report(on_progress: Callable[[str, int, int], None]) -> ReachReport:
            asked_by = core.reach.parse_rule(rule)
            harness = await services.harness()
            if engine == "ray":
                address = core.ray.window_address()
                found = await core.ray.find_reach_in_ray(
                    harness,
                    entry,
                    address=address,
                    limit=limit,
                    rule=asked_by,
                    on_progress=on_progress,
                    on_unreachable=found_now,
                )
            else:
                found = await core.reach.find_reach(
                    harness,
                    entry,
                    limit=limit,
                    rule=asked_by,
                    on_progress=on_progress,
                    on_unreachable=found_now,
                )
            await self._ensure_chart()
            return found

        def show(found: ReachReport) -> str:
            self.show_report(found)
            return f"Reach of {found.db_name}: {len(found.unreachable):,} entries unreached"

        def stopped() -> str:
            asked, total = self._asked
            listed = self.model.rowCount()
            return (
                f"Cancelled after asking for {asked:,} of {total or asked:,} entries of {name}: the "
                f"{listed:,} listed were found out of reach before the stop, without their causes; "
                "the spread of results needs a finished report."
                if listed
                else f"Cancelled after asking for {asked:,} of {total or asked:,} entries of {name}: none "
                "was found out of reach before the stop, and no report was made."
            )

        self._on_progress("reading entries", 0, 0)
        return self.report_run.run(
            report,
            progress=self._on_progress,
            busy=f"Asking for every entry of {name} as the agent searches…",
            show=show,
            cancelled=stopped,
            activity=(f"Checking which entries of {name} the agent reaches…", "Reach report cancelled"),
            failed=self._forget_report,
        )

    async def _ensure_chart(self) -> ReachChart:
        """The chart, made on first use; pyqtgraph is imported on a worker thread first (importing it on
        the GUI thread would hold the window)."""
        if self.chart is None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.services.chores, importlib.import_module, CHART_MODULE)
        if self.chart is None:
            from recall_gui.qt.panels.reach_chart import ReachChart

            self.chart = ReachChart()
            self.chart_layout.removeWidget(self.chart_placeholder)
            self.chart_placeholder.deleteLater()
            self.chart_layout.addWidget(self.chart, 1)
        return self.chart

    def _forget_report(self) -> None:
        """No report on screen: the last one may be another database's, this one failed, or a new one
        is being made."""
        self.report, self.listed = None, None
        self.model.show((), 0)
        self.table.setPlaceholder("Unreachable entries are listed here.")
        if self.chart is not None:
            self.chart.clear_counts()

    def show_report(self, report: ReachReport) -> None:
        import numpy as np

        self.report = report
        self.listed = (report.db_name, report.limit)
        self.services.last_reports.reach[report.db_name] = report  # the Review page's order "unreachable"
        self.note.show_note(summary(report), "good" if report.all_reachable else "warning")
        self.model.show(report.unreachable, report.depth)
        self.table.setPlaceholder("Every entry is reached by its own query." if report.all_reachable else "")
        self.table.sortByColumn(RANK, Qt.SortOrder.AscendingOrder)
        if self.chart is not None:
            counts = np.array([entry.returned_for for entry in report.retrievability], dtype=np.int64)
            self.chart.show_counts(counts, report.gini)

    # --- the selected row -----------------------------------------------------------------------------

    def selected(self) -> Unreachable | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.proxy.data(rows[0], ITEM_ROLE)
        return item if item is not None else None

    def _on_selection(self, *_args: object) -> None:
        item = self.selected()
        running = self.report_run.running
        self.open_button.setEnabled(item is not None and not running)
        self.golden_button.setEnabled(item is not None and bool(item.query) and not running)

    def _on_activated(self, index: QModelIndex) -> None:
        self.table.selectRow(index.row())
        self.open_selected()

    def open_selected(self) -> None:
        item = self.selected()
        if item is not None and self.listed is not None:
            self.services.navigation.open_entry(self.listed[0], item.named)

    def add_golden_check(self) -> GoldenCheck | None:
        """Keep the selected entry's query as a golden check that expects it, at the report's limit."""
        item, listed, services = self.selected(), self.listed, self.services
        entry = services.registry.get(listed[0]) if listed is not None else None
        if item is None or listed is None or entry is None or not item.query:
            return None
        limit = listed[1]
        expected = core.golden.expected_by_sha(item.id, item.content_sha256)
        check = core.golden.check_for(entry, services.registry, item.query, (expected,), limit)
        try:
            replaced = services.golden.add(check)
        except GoldenFileError as error:
            services.show_message(
                UserMessage(
                    f"The golden check is kept, but not saved: {error.message}",
                    "Save the checks to another file on the Checks page (Save As…).",
                    "warning",
                )
            )
            return check
        where = core.golden.place_text(check, services.registry)
        services.page_activity(self)(
            f"{'Updated' if replaced else 'Added'} the golden check {quoted(item.query)} (expects "
            f"{item.named}, limit {limit}) in {services.golden.path.name}, on {where}: it fails until the "
            "agent reaches the entry"
        )
        return check

    # --- slots (thin) ---------------------------------------------------------------------------------

    def request_report(self) -> None:
        name = self.database_combo.chosen()
        if name:
            engine = str(self.engine_combo.currentData() or "local")
            self.check(name, self.limit_spin.value(), self.chosen_rule(), engine)

    def cancel(self) -> bool:
        return self.report_run.cancel()
