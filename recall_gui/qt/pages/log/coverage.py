"""The Log page's coverage: a database's rows split into those the logged calls returned at least once
and those never returned (browsed like any rows, opened on the knowledge page), and the hubs: entries
returned for more than a quarter of the calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QVBoxLayout, QWidget

from recall_gui import core
from recall_gui.core.base import RecallError, plural
from recall_gui.core.storage import IdRepeats, content_sha256
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.models.calls_model import CallsModel, local_time
from recall_gui.qt.models.roles import ITEM_ROLE
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PlaceholderTableView, push_button

if TYPE_CHECKING:
    from recall_gui.core.agent_log import Coverage
    from recall_gui.core.reach import HubReport
    from recall_gui.core.tables import Page

HINT_COVERAGE = (
    "Choose a database and press Compute: its entries that no logged call ever returned show here."
)


def hubs_text(report: HubReport, shown: int = 5) -> str:
    """The entries agents got most often (hubs: above a quarter of the calls), or that there are none."""
    hubs = report.hubs(core.reach.DEFAULT_HUB_SHARE)
    if not report.queries:
        return ""
    if not hubs:
        return f"No hub: no entry was returned for more than {core.reach.DEFAULT_HUB_SHARE:.0%} of the calls."
    named = ", ".join(f"{hub.named} ({hub.share:.0%})" for hub in hubs[:shown])
    more = f" and {len(hubs) - shown} more" if len(hubs) > shown else ""
    return f"Hubs, returned for more than {core.reach.DEFAULT_HUB_SHARE:.0%} of the calls: {named}{more}."


def _repeats_text(repeats: IdRepeats) -> str:
    """That the table's ids repeat (its entries are then counted, and named, by their contents)."""
    said = repeats.sentence()
    return "" if said is None else f" ({said[0].upper()}{said[1:]}.)"


class CoverageTab(QWidget):
    """``logCoverageDatabase``, ``logCoverageButton``, ``logCoverageSummary``, ``logHubs``,
    ``logNeverTable`` and ``logNeverOpenButton``."""

    def __init__(
        self,
        services: WindowServices,
        calls: CallsModel,
        *,
        finished: SignalInstance,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        #: The calls read from the log, which the coverage counts.
        self.calls = calls
        self._finished = finished
        self.covering = services.operations.lane("log-coverage")
        #: The coverage shown, and whether calls arrived since it was computed.
        self.coverage: Coverage | None = None
        self.outdated = False
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
        for label in (self.coverage_summary, self.hubs_label):  # they name databases and ids
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.never_model = BrowseModel(
            self.services.operations.lane().start, parent=self
        )  # pages side by side
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 8, 6, 6)
        layout.setSpacing(6)
        layout.addLayout(row)
        layout.addWidget(self.coverage_summary)
        layout.addWidget(self.hubs_label)
        layout.addWidget(self.never_table, 1)
        self.coverage_button.clicked.connect(self.request_coverage)
        self.never_open_button.clicked.connect(self._open_never_returned)
        self.never_table.doubleClicked.connect(lambda _index: self._open_never_returned())
        self.never_table.selectionModel().selectionChanged.connect(lambda *_: self.enable_buttons())
        self.never_model.modelReset.connect(self._fit_never_columns)
        self.enable_buttons()

    def _fit_never_columns(self) -> None:
        header = self.never_table.horizontalHeader()
        self.never_table.setColumnWidth(0, 70)
        self.never_table.setColumnWidth(1, 170)
        if header.count() > 2:
            header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

    def show_databases(self) -> None:
        self.coverage_database.show_registry(self.services.registry)
        self.coverage_button.setEnabled(self.coverage_database.count() > 0)

    async def compute_coverage(self, name: str) -> None:
        """Split ``name``'s rows by whether a logged call returned them; show the never-returned ones."""
        entry = self.services.registry.get(name)
        if entry is None:
            self.coverage_summary.setText(f"{name} is not in the registry.")
            self._finished.emit()
            return
        self.coverage_summary.setText(f"Reading the ids of {name}…")
        session = await self.services.session()
        try:
            found = await core.agent_log.coverage(session, entry, self.calls.records)
            metadata = (await core.tables.describe_table(session, entry.target)).metadata_columns
        except RecallError as error:
            self.coverage = None
            self.never_model.reset(None)
            self.coverage_summary.setText(f"The coverage of {name} cannot be computed: {error.message}")
            self._finished.emit()
            return
        self.coverage = found
        self.outdated = False
        rows = found.never_returned_rows

        async def fetch(offset: int, limit: int) -> Page:
            return await core.agent_log.rows_by_row_id(
                session, entry.target, rows, offset=offset, limit=limit
            )

        self.never_model.reset(fetch, metadata)
        self.never_model.set_repeats(found.repeats)
        self.never_table.setPlaceholder("Every entry was returned at least once." if found.entries else "")
        await self.never_model.load_first_page()
        share = f" ({found.returned / found.entries:.0%})" if found.entries else ""
        first = next((record for record in self.calls.records if not record.from_window), None)
        since = f" since {local_time(first)}" if first is not None else ""
        self.coverage_summary.setText(
            f"{found.returned:,} of {found.entries:,} entries{share} of {name} were returned to agents at "
            f"least once by {plural(found.calls, 'call')}{since}; {len(found.never_returned):,} never were"
            + (":" if found.never_returned else ".")
            + _repeats_text(found.repeats)
        )
        hubs = core.reach.hubs_from_log(self.calls.records, name, found.repeats)
        self.hubs_label.setText(hubs_text(hubs))
        self.enable_buttons()
        self._finished.emit()

    def calls_arrived(self) -> None:
        """The log was read again with new calls: say the coverage shown does not count them. It is not
        computed again by itself: that would reset the rows the user is browsing."""
        if self.coverage is not None and not self.outdated:
            self.outdated = True
            self.coverage_summary.setText(
                self.coverage_summary.text() + " Calls arrived since: press Compute to count them too."
            )

    def request_coverage(self, name: str | None = None) -> None:
        chosen = name if isinstance(name, str) else self.coverage_database.currentText()
        if chosen:
            self.covering.start(self.compute_coverage(chosen))

    def enable_buttons(self) -> None:
        self.never_open_button.setEnabled(
            self.coverage is not None and bool(self.never_table.selectionModel().selectedRows())
        )

    def _open_never_returned(self) -> None:
        rows = self.never_table.selectionModel().selectedRows()
        item = rows[0].data(ITEM_ROLE) if rows else None
        if self.coverage is None or item is None:
            return
        repeats = self.coverage.repeats
        named = (
            repeats.label(item.id, content_sha256(item.content)) if repeats.is_shared(item.id) else item.id
        )
        self.services.navigation.open_entry(self.coverage.db_name, named)
