"""The knowledge-base page: choose a database, search it as the agent does, browse it, check entries.

The page builds the widgets and composes the parts that do each job (this package's ``__init__`` lists
them); what other modules and tests call on the page is passed on to the part that does it. Each
operation is a plain ``async def`` that tests await directly; the slots read the widgets into
:class:`Inputs` and start the operation in its lane (``qt/operations.py``), so no slot blocks and no
failure is lost. A search that finishes after a newer request started is dropped: the newer request
cancels the older one in the search lane and supersedes it there, which the older one checks before it
shows anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from recall_gui import core
from recall_gui.core.agents import GoldenCheck
from recall_gui.core.base import DEFAULT_LIMIT, RecallError
from recall_gui.core.drafts import SearchDraft
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.pages.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.pages.knowledge.browsing import Browser
from recall_gui.qt.pages.knowledge.choosing import Chooser
from recall_gui.qt.pages.knowledge.documents_tab import DocumentsTab
from recall_gui.qt.pages.knowledge.entry_detail import EntryDetail
from recall_gui.qt.pages.knowledge.exporting import Exporter, ExportFormat
from recall_gui.qt.pages.knowledge.following import WriteFollower
from recall_gui.qt.pages.knowledge.looking_at import LookingAt
from recall_gui.qt.pages.knowledge.scope_controls import ScopeControls
from recall_gui.qt.pages.knowledge.searching import Searching
from recall_gui.qt.pages.knowledge.would_see import WouldSee
from recall_gui.qt.pages.opened_tables import OpenedTables
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.detail_panel import MONOSPACE_SETTING, DetailPanel
from recall_gui.qt.panels.documents_panel import DocumentsPanel
from recall_gui.qt.panels.entry_tools import EntryTools
from recall_gui.qt.panels.filter_bar import FilterBar
from recall_gui.qt.panels.method_compare import MethodComparePanel
from recall_gui.qt.panels.opened_bar import OpenedBar
from recall_gui.qt.panels.query_bar import MAX_LIMIT, QueryBar
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.panels.schema_panel import SchemaPanel
from recall_gui.qt.panels.version_bar import VersionBar
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.base import SearchHit
    from recall_gui.core.search import DatabaseHealth, SearchReport
    from recall_gui.core.storage import TableTarget
    from recall_gui.core.tables import BrowseRow, TableInfo, TableVersion
    from recall_gui.qt.operations import Lane


class KnowledgePage(QWidget):
    """``dbCombo``, ``queryEdit``, ``limitSpin``, ``resultsTable``/``browseTable`` and the entry detail."""

    #: The latest search finished: its rows (or its error) are shown.
    searchFinished = Signal()
    #: The first page of the table (or of the filtered rows) is shown.
    browseReady = Signal()
    #: "Would the agent see this?" for a browsed row was answered (or could not be).
    visibilityShown = Signal()
    #: What the page looks at changed: another database, another version of its table.
    scopeChanged = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgePage")
        self.services = services
        self.database_bar = DatabaseBar()
        self.database_bar.model_of = services.model_of
        self.opened_bar = OpenedBar()
        self.query_bar = QueryBar()
        self.browse_model = BrowseModel(
            services.operations.lane().start, parent=self
        )  # pages load side by side
        self.results = ResultsPanel(self.browse_model)
        self.detail = DetailPanel()
        self.entry_tools = EntryTools()
        self.filter_bar = FilterBar()
        self.version_bar = VersionBar()
        self.schema_panel = SchemaPanel()
        self.words = MethodComparePanel()
        self.documents = DocumentsPanel()
        self.side = QTabWidget()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self._lay_out()

        #: What the page looks at: the database, the version of its table, the rows chosen on the map.
        self.looking_at = looking_at = LookingAt()
        self.searching = searching = Searching(
            services,
            looking_at,
            query_bar=self.query_bar,
            results=self.results,
            browse=self.browse,
            finished=self.searchFinished,
        )
        self.status_labels = searching.status_labels
        self.status_count, self.status_embed = searching.status_count, searching.status_embed
        self.status_search, self.status_model = searching.status_search, searching.status_model
        self.browser = browser = Browser(
            services,
            looking_at,
            searching=searching,
            results=self.results,
            browse_model=self.browse_model,
            ready=self.browseReady,
        )
        self.would_see = WouldSee(
            services,
            looking_at,
            searching=searching,
            entry_tools=self.entry_tools,
            query_bar=self.query_bar,
            results=self.results,
            selected=lambda: self.entry_detail.item,
            shown=self.visibilityShown,
        )
        self.entry_detail = EntryDetail(
            services,
            looking_at,
            browser=browser,
            results=self.results,
            browse_model=self.browse_model,
            detail=self.detail,
            side=self.side,
            would_see=self.would_see,
        )
        self.exporter = Exporter(services, looking_at, browser, self.results, self)
        self.scope_controls = ScopeControls(
            services,
            looking_at,
            searching=searching,
            browser=browser,
            entry_detail=self.entry_detail,
            bars=(self.filter_bar, self.version_bar, self.schema_panel),
            changed=self.scopeChanged,
        )
        self.follower = WriteFollower(
            services, looking_at, database_bar=self.database_bar, scope_controls=self.scope_controls
        )
        self.chooser = Chooser(
            services,
            looking_at,
            parts=(searching, browser, self.scope_controls, self.entry_detail),
            bars=(self.database_bar, self.opened_bar, self.query_bar, self.results),
            read_inputs=self.read_inputs,
            publish_search=self._publish_search,
        )
        self.documents_tab = DocumentsTab(
            services, looking_at, searching=searching, entry_detail=self.entry_detail, panel=self.documents
        )
        #: Tables opened from a folder (the database bar's "Opened" group), their dialogs and recents.
        self.opened = OpenedTables(services, self, self)
        #: The same query by words and hybrid, after a search.
        self.comparing_words = services.operations.lane("words")
        self._connect()

    def _lay_out(self) -> None:
        """The bars above; beside the table (and the tools under it), the side tabs: the entry detail and
        the schema view (scrolled when the window is too short for them)."""
        column = QWidget()
        column_layout = QVBoxLayout(column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.setSpacing(0)
        column_layout.addWidget(self.results, 1)
        column_layout.addWidget(self.entry_tools)
        self.side.setObjectName("sideTabs")
        self.side.setDocumentMode(True)
        self.side.addTab(self.detail, "Entry")
        self.side.addTab(self.schema_panel, "Columns")
        self.side.addTab(self.words, "Words")
        self.side.addTab(self.documents, "Documents")
        scroller = QScrollArea()
        scroller.setObjectName("sideScroller")
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(self.side)
        bar = scroller.verticalScrollBar().sizeHint().width()
        scroller.setMinimumWidth(self.side.minimumSizeHint().width() + bar)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(column)
        self.splitter.addWidget(scroller)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        for bar_widget in (
            self.database_bar,
            self.opened_bar,
            self.query_bar,
            self.filter_bar,
            self.version_bar,
        ):
            layout.addWidget(bar_widget)
        layout.addWidget(self.splitter, 1)

    def heightForWidth(self, _width: int) -> int:
        """None of its own: the scroll area a page sits in sizes a page whose layout has a height for its
        width (the facts wrap) to its preferred height, taller than an 800x500 window, instead of the
        window's; the page fills the window and scrolls only below its minimum."""
        return -1

    def _connect(self) -> None:
        """The panels' signals to the operations they start (slots stay thin)."""
        services, query_bar, limit_spin = self.services, self.query_bar, self.query_bar.limit_spin
        query_bar.searchRequested.connect(self.request_search)
        query_bar.cancelRequested.connect(self.cancel)
        self.database_bar.databaseChosen.connect(self.request_database)
        self.database_bar.openedChosen.connect(self.opened.on_opened_chosen)
        self.opened_bar.modelChosen.connect(self.opened.on_model_chosen)
        self.opened_bar.addRequested.connect(self.opened.ask_register)
        self.results.entrySelected.connect(self.entry_detail.select)
        self.results.filterChanged.connect(self._on_filter_changed)
        self.entry_tools.moreLikeRequested.connect(self.request_more_like)
        self.entry_tools.addGoldenRequested.connect(self.add_golden_check)
        limit_spin.valueChanged.connect(lambda value: services.memory.set(WindowMemory.LIMIT, value))
        # What the other pages may read of this one: the database, query and limit as they stand.
        query_bar.query_edit.textChanged.connect(self._publish_search)
        limit_spin.valueChanged.connect(self._publish_search)
        services.navigation.entryRequested.connect(self.request_open_entry)
        limit_spin.valueChanged.connect(self.searching.on_limit_changed)
        limit_spin.refused.connect(self.searching.on_limit_refused)
        self.filter_bar.whereChanged.connect(self._on_where_changed)
        self.filter_bar.where_edit.textEdited.connect(self.scope_controls.on_where_typed)
        self.filter_bar.versionChosen.connect(self._on_version_chosen)
        self.filter_bar.schemaRequested.connect(lambda: self.side.setCurrentWidget(self.schema_panel))
        self.schema_panel.columnActivated.connect(self.filter_bar.insert_column)
        self.version_bar.latestRequested.connect(lambda: self._on_version_chosen(None))
        for shown in (self.scopeChanged, self.searchFinished, self.browseReady):
            shown.connect(self._publish_search)  # the view the Agent view compares the agent's search with
        self.searchFinished.connect(self._request_words)
        self.searchFinished.connect(self.documents_tab.request)
        self.scopeChanged.connect(self.documents_tab.scope_changed)
        self.searchFinished.connect(self._follow_search)
        self.browseReady.connect(self._follow_browse)

    def _request_words(self) -> None:
        """After a search by text: the same query by words and hybrid, beside the agent's results."""
        report, searched = self.searching.last_report, self.searching.searched
        if report is None or searched is None or self.searching.like is not None:
            return
        self.comparing_words.start(self.compare_words(report, self.read_inputs().where))

    async def compare_words(self, report: SearchReport, where: str) -> None:
        """Fill the *Words* tab: LanceDB's full-text and hybrid answers for the query just searched."""
        entry, query, limit = report.database, report.result.query, len(report.result.hits)
        if self.looking_at.version is not None:
            self.words.show_note("Words are compared on the latest version: open the latest to compare.")
            return
        harness = await self.services.harness()
        try:
            found = {
                method: await core.search.text_search(
                    harness, entry, query, max(limit, 1), method, where=where or None
                )
                for method in ("fts", "hybrid")
            }
        except RecallError as error:
            self.words.show_note(error.full_text())
            return
        if self.searching.last_report is not report:
            return  # a newer search is shown
        lists = {"vector": [hit.id for hit in report.result.hits]}
        lists.update({method: [e.id for e in result.output.results] for method, result in found.items()})
        self.words.show_lists(query, lists)

    def _follow_search(self) -> None:
        """The header and the version list follow the version the search read (another program may
        have written the table)."""
        report = self.searching.last_report
        if report is not None:
            self.follower.shown(report.database, report.result.table_version)

    def _follow_browse(self) -> None:
        browsing = self.browser.browsing
        if browsing is not None:
            self.follower.shown(browsing.entry, self.browse_model.table_version)

    def _publish_search(self) -> None:
        inputs, looking_at = self.read_inputs(), self.looking_at
        view = looking_at.view(inputs.limit)
        self.services.drafts.publish_search(SearchDraft(looking_at.current, inputs.query, inputs.limit, view))

    def read_inputs(self) -> Inputs:
        """What the user typed; slots read it when they start an operation, operations never do."""
        return Inputs(
            self.query_bar.query(),
            self.query_bar.limit(),
            self.results.filter_text(),
            self.filter_bar.where(),
        )

    # --- what the page looks at (``pages/scope.py``'s ``TableScope``) ------------------------------------

    @property
    def current(self) -> DatabaseEntry | None:
        return self.looking_at.current

    @property
    def table_info(self) -> TableInfo | None:
        """The current database's table as last checked (``None`` until read, or if it cannot be)."""
        return self.looking_at.info

    @property
    def version(self) -> int | None:
        """The version of the table shown; ``None`` for the latest."""
        return self.looking_at.version

    @property
    def versions(self) -> tuple[TableVersion, ...]:
        return self.looking_at.versions

    @property
    def selection(self) -> tuple[npt.NDArray[np.uint64], str] | None:
        """The rows chosen on the map that browsing shows (row ids, and what to call them), if any."""
        return self.looking_at.selection

    @property
    def last_report(self) -> SearchReport | None:
        """The search whose results are shown (the map rings them), if the table shows results."""
        return self.searching.last_report

    def target(self) -> TableTarget:
        """The current database's table at the version shown."""
        return self.looking_at.target()

    # --- operations, done by the parts --------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        self.chooser.set_registry(registry)
        if self.entry_detail.item is not None:  # whether agents search the table may have changed
            self.would_see.show(self.entry_detail.item)

    def show_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        """The databases re-checked; the current one's header keeps the facts of the rows shown."""
        self.chooser.show_health({name: self.follower.health_checked(h) for name, h in healths.items()})

    def empty_hint(self, text: str) -> None:
        """What the results table says while there is nothing to show (e.g. while the demo is built)."""
        self.results.show_result(None, "", text)

    async def choose_database(self, name: str | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        await self.chooser.choose_database(name, inputs)

    async def choose_opened(self, key: str, entry: DatabaseEntry, inputs: Inputs = EMPTY_INPUTS) -> None:
        await self.chooser.choose_opened(key, entry, inputs)

    def show_opened(self, key: str, entry: DatabaseEntry) -> None:
        self.chooser.show_opened(key, entry)

    def show_opened_entries(self, entries: Mapping[str, DatabaseEntry]) -> None:
        """The database bar's "Opened" group lists ``entries`` (by their key)."""
        self.database_bar.set_opened(entries)

    async def search(self, inputs: Inputs) -> None:
        await self.searching.search(inputs)

    async def more_like_this(self, item: object, limit: int) -> None:
        await self.searching.more_like_this(item, limit)

    async def browse(self, inputs: Inputs = EMPTY_INPUTS) -> None:
        await self.browser.browse(inputs)

    def cancel(self) -> bool:
        return self.searching.cancel(self.chooser.lane)

    async def load_table_facts(self, entry: DatabaseEntry) -> None:
        await self.scope_controls.load_table_facts(entry)

    async def open_version(self, version: int | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        await self.scope_controls.open_version(version, inputs)

    async def show_selection(self, row_ids: npt.NDArray[np.uint64], label: str, inputs: Inputs) -> None:
        await self.scope_controls.show_selection(row_ids, label, inputs)

    async def clear_selection(self, inputs: Inputs) -> None:
        await self.scope_controls.clear_selection(inputs)

    async def open_row(self, row_id: int, how: str = "chosen on the map") -> SearchHit | None:
        return await self.entry_detail.open_row(row_id, how)

    async def load_vector(self, row: BrowseRow) -> None:
        await self.entry_detail.load_vector(row)

    async def open_entry(self, name: str, entry_id: str) -> bool:
        return await self.chooser.open_entry(name, entry_id)

    async def show_visibility(self, row: BrowseRow, query: str, limit: int) -> None:
        await self.would_see.show_visibility(row, query, limit)

    def add_golden_check(self) -> GoldenCheck | None:
        return self.would_see.add_golden_check()

    async def export_to(self, path: Path, fmt: ExportFormat) -> int:
        return await self.exporter.export_to(path, fmt)

    async def export_browsed(self, path: Path, fmt: ExportFormat) -> int:
        return await self.exporter.export_browsed(path, fmt)

    def ask_export(self, fmt: ExportFormat) -> None:
        self.exporter.ask_export(fmt)

    # --- slots (thin: they read the widgets and start an operation) -----------------------------------

    def request_search(self) -> None:
        problem = self.query_bar.limit_spin.problem()
        if problem is not None:  # the box shows a limit it does not hold: never search with another one
            self.searching.on_limit_refused(problem)
            return
        self.searching.lane.start(self.search(self.read_inputs()))

    def request_more_like(self) -> None:
        item = self.entry_detail.item
        if item is not None and self.looking_at.current is not None:
            self.searching.lane.start(self.more_like_this(item, self.query_bar.limit()))

    def request_open_entry(self, name: str, entry_id: str) -> None:
        self.searching.lane.start(self.open_entry(name, entry_id))

    @property
    def choose_lane(self) -> Lane:
        """Where choosing a database runs (a newer choice cancels the older one)."""
        return self.chooser.lane

    def request_database(self, name: str | None) -> None:
        """Choose ``name`` (``None``: the usual one) as if from the database bar."""
        inputs = self.read_inputs()
        chooser = self.chooser
        chooser.lane.start(chooser.open_database(chooser.switch_to(name), inputs))

    def _on_filter_changed(self, _text: str) -> None:
        self.searching.lane.start(self.browse(self.read_inputs()))

    def _on_where_changed(self, _where: str) -> None:
        self.searching.lane.start(self.search(self.read_inputs()))

    def _on_version_chosen(self, version: object) -> None:
        self.request_version(version if isinstance(version, int) else None)

    def request_version(self, version: int | None) -> None:
        """Open ``version`` (``None``: the latest) in the search lane, with what the user typed."""
        self.searching.lane.start(self.open_version(version, self.read_inputs()))

    def browse_all(self) -> None:
        """Every row of the table; the query typed stays in its box (Enter searches it again)."""
        self.looking_at.selection = None
        self.results.filter_edit.clear()  # all rows: an earlier filter would hide some
        self.searching.lane.start(self.browse(self.read_inputs()))

    def focus_query(self) -> None:
        self.query_bar.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query_bar.query_edit.selectAll()

    # --- memory ---------------------------------------------------------------------------------------

    def restore(self, memory: WindowMemory) -> None:
        splitter = memory.bytes(WindowMemory.SPLITTER)
        if splitter is None or not self.splitter.restoreState(splitter):
            self.splitter.setSizes([760, 520])
        self.detail.set_monospace(bool(memory.integer(MONOSPACE_SETTING, 0)))
        limit = memory.integer(WindowMemory.LIMIT, DEFAULT_LIMIT)
        self.query_bar.limit_spin.setValue(min(max(limit, 1), MAX_LIMIT))

    def save(self, memory: WindowMemory) -> None:
        memory.set(WindowMemory.SPLITTER, self.splitter.saveState())
        memory.set(WindowMemory.LIMIT, self.query_bar.limit())
        memory.set(MONOSPACE_SETTING, int(self.detail.monospace.isChecked()))
        current = self.looking_at.current
        if current is not None and current.origin == "registry":
            memory.set(WindowMemory.DATABASE, current.name)
