"""The knowledge-base page: choose a database, search it as the agent does, browse it, check entries.

The page builds the widgets and composes the parts that do each job (this package's ``__init__`` lists them);
other modules and tests call the part that does the job (``page.searching.search``,
``page.exporter.export_to``), and the page's face to other pages (``TableScope``) and to the opened tables
(``OpenedHost``) is made of the parts' own methods. The slots read the widgets into :class:`Inputs` and start
the operation in its lane (``qt/operations.py``), so no slot blocks and no failure is lost. A search that
finishes after a newer request started is dropped: the newer request cancels the older one in the search lane
and supersedes it there, which the older one checks before it shows anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from recall_gui.core.drafts import SearchDraft
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.qt.actions.opened_tables import OpenedTables
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.pages.knowledge.browsing import Browser
from recall_gui.qt.pages.knowledge.choosing import Chooser
from recall_gui.qt.pages.knowledge.documents_tab import DocumentsTab
from recall_gui.qt.pages.knowledge.entry_detail import EntryDetail
from recall_gui.qt.pages.knowledge.exporting import Exporter
from recall_gui.qt.pages.knowledge.following import WriteFollower
from recall_gui.qt.pages.knowledge.looking_at import LookingAt
from recall_gui.qt.pages.knowledge.remembering import Remembering
from recall_gui.qt.pages.knowledge.reviewing import ReviewLinks
from recall_gui.qt.pages.knowledge.scope_controls import ScopeControls
from recall_gui.qt.pages.knowledge.searching import Searching
from recall_gui.qt.pages.knowledge.words_tab import WordsTab
from recall_gui.qt.pages.knowledge.would_see import WouldSee
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.detail_panel import DetailPanel
from recall_gui.qt.panels.documents_panel import DocumentsPanel
from recall_gui.qt.panels.entry_tools import EntryTools
from recall_gui.qt.panels.filter_bar import FilterBar
from recall_gui.qt.panels.method_compare import MethodComparePanel
from recall_gui.qt.panels.opened_bar import OpenedBar
from recall_gui.qt.panels.query_bar import QueryBar
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.panels.schema_panel import SchemaPanel
from recall_gui.qt.panels.version_bar import VersionBar
from recall_gui.qt.scope.inputs import Inputs
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.search import DatabaseHealth, SearchReport
    from recall_gui.core.tables import TableInfo, TableVersion


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
            browse=lambda inputs: self.browser.browse(inputs),  # noqa: PLW0108 (the browser is made below)
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
        last_search = searching.shown_search
        self.exporter = Exporter(services, looking_at, browser, self.results, self, last_search=last_search)
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
        self.words_tab = WordsTab(services, looking_at, searching=searching, panel=self.words)
        self.verdicts = ReviewLinks(services, looking_at, self.results, self.entry_tools, self.searchFinished)
        #: The splitter, the limit, the detail's font and the database, kept for the next start.
        self.remembering = Remembering(
            looking_at, splitter=self.splitter, query_bar=self.query_bar, detail=self.detail
        )
        # The page as other pages see it (TableScope) and as the opened tables do (OpenedHost): the methods
        # of the parts that do each job.
        self.target = looking_at.target
        self.open_version = self.scope_controls.open_version
        self.show_selection = self.scope_controls.show_selection
        self.clear_selection = self.scope_controls.clear_selection
        self.open_row = self.entry_detail.open_row
        self.choose_database = self.chooser.choose_database
        self.choose_opened = self.chooser.choose_opened
        self.show_opened = self.chooser.show_opened
        self.show_opened_entries = self.database_bar.set_opened
        #: Where choosing a database runs (a newer choice cancels the older one).
        self.choose_lane = self.chooser.lane
        #: Tables opened from a folder (the database bar's "Opened" group), their dialogs and recents.
        self.opened = OpenedTables(services, self, self)
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
        self.entry_tools.addGoldenRequested.connect(self.would_see.add_golden_check)
        limit_spin.valueChanged.connect(lambda value: services.memory.set(WindowMemory.LIMIT, value))
        # What the other pages may read of this one: the database, query and limit as they stand.
        query_bar.query_edit.textChanged.connect(self._publish_search)
        limit_spin.valueChanged.connect(self._publish_search)
        services.navigation.entryRequested.connect(self.request_open_entry)
        limit_spin.valueChanged.connect(self.searching.on_limit_changed)
        limit_spin.refused.connect(self.searching.on_limit_refused)
        self.filter_bar.whereChanged.connect(self._on_where_changed)
        self.filter_bar.where_edit.textEdited.connect(self.scope_controls.on_where_typed)
        self.filter_bar.versionChosen.connect(
            lambda version: self.request_version(version if isinstance(version, int) else None)
        )
        self.filter_bar.schemaRequested.connect(lambda: self.side.setCurrentWidget(self.schema_panel))
        self.schema_panel.columnActivated.connect(self.filter_bar.insert_column)
        self.version_bar.latestRequested.connect(lambda: self.request_version(None))
        for shown in (self.scopeChanged, self.searchFinished, self.browseReady):
            shown.connect(self._publish_search)  # the view the Agent view compares the agent's search with
        self.searchFinished.connect(lambda: self.words_tab.request(self.read_inputs().where))
        self.searchFinished.connect(self.documents_tab.request)
        self.browseReady.connect(self.documents_tab.browsed)
        self.scopeChanged.connect(self.documents_tab.scope_changed)
        # The header and the version list follow the version the rows shown were read from.
        self.searchFinished.connect(lambda: self.follower.search_shown(self.searching.last_report))
        self.browseReady.connect(lambda: self.follower.rows_shown(self.browser.browsing, self.browse_model))

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

    # --- what the page looks at (``qt/scope/table_scope.py``'s ``TableScope``) ---------------------------

    @property
    def current(self) -> DatabaseEntry | None:
        return self.looking_at.current

    @property
    def table_info(self) -> TableInfo | None:
        return self.looking_at.info

    @property
    def version(self) -> int | None:
        return self.looking_at.version

    @property
    def versions(self) -> tuple[TableVersion, ...]:
        return self.looking_at.versions

    @property
    def selection(self) -> tuple[npt.NDArray[np.uint64], str] | None:
        return self.looking_at.selection

    @property
    def last_report(self) -> SearchReport | None:
        return self.searching.last_report

    # --- operations, done by the parts --------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        self.chooser.set_registry(registry)
        if self.entry_detail.item is not None:  # whether agents search the table may have changed
            self.would_see.show(self.entry_detail.item)

    def show_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        """The databases re-checked; the current one's header keeps the facts of the rows shown."""
        self.chooser.show_health({name: self.follower.health_checked(h) for name, h in healths.items()})

    def cancel(self) -> bool:
        return self.searching.cancel(self.chooser.lane)

    # --- slots (thin: they read the widgets and start an operation) -----------------------------------

    def request_search(self) -> None:
        problem = self.query_bar.limit_spin.problem()
        if problem is not None:  # the box shows a limit it does not hold: never search with another one
            self.searching.on_limit_refused(problem)
            return
        self.searching.search(self.read_inputs())

    def request_more_like(self) -> None:
        item = self.entry_detail.item
        if item is not None:
            self.searching.more_like_this(item, self.query_bar.limit())

    def request_open_entry(self, name: str, entry_id: str) -> None:
        self.searching.lane.start(self.chooser.open_entry(name, entry_id))

    def request_database(self, name: str | None) -> None:
        """Choose ``name`` (``None``: the usual one) as if from the database bar."""
        inputs = self.read_inputs()
        chooser = self.chooser
        chooser.lane.start(chooser.open_database(chooser.switch_to(name), inputs))

    def _on_filter_changed(self, _text: str) -> None:
        self.searching.lane.start(self.browser.browse(self.read_inputs()))

    def _on_where_changed(self, _where: str) -> None:
        self.searching.search(self.read_inputs())

    def request_version(self, version: int | None) -> None:
        """Open ``version`` (``None``: the latest) in the search lane, with what the user typed."""
        self.searching.lane.start(self.scope_controls.open_version(version, self.read_inputs()))

    def browse_all(self) -> None:
        """Every row of the table; the query typed stays in its box (Enter searches it again)."""
        self.looking_at.selection = None
        self.results.filter_edit.clear()  # all rows: an earlier filter would hide some
        self.searching.lane.start(self.browser.browse(self.read_inputs()))

    def focus_query(self) -> None:
        self.query_bar.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query_bar.query_edit.selectAll()
