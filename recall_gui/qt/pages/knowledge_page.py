"""The knowledge-base page: choose a database, search it as the agent does, browse it, check entries.

Each operation is a plain ``async def`` that tests await directly; the slots read the widgets into
:class:`Inputs` and start the operation as a kept task, so no slot blocks and no failure is lost. A search
or page that finishes after a newer request started is dropped: the newer request cancels the older task
(by key) and bumps a generation counter the older one checks before it shows anything.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QLabel,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.atomic import write_text_atomic
from recall_gui.core.captions import plural, quoted
from recall_gui.core.drafts import SearchDraft
from recall_gui.core.errors import GoldenFileError, RecallError
from recall_gui.core.export import to_csv, to_json
from recall_gui.core.golden import GoldenCheck
from recall_gui.core.messages import UserMessage, sentence
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.core.registry_advice import empty_registry_hint, location_problem
from recall_gui.core.types import DEFAULT_LIMIT, SearchHit
from recall_gui.qt.export_dialog import ExportProgress
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.pages.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.pages.opened_tables import OpenedTables
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.detail_panel import MONOSPACE_SETTING, DetailPanel
from recall_gui.qt.panels.entry_tools import NO_QUERY, EntryTools
from recall_gui.qt.panels.filter_bar import FilterBar
from recall_gui.qt.panels.opened_bar import OpenedBar
from recall_gui.qt.panels.query_bar import MAX_LIMIT, MAX_QUERY_CHARS, QueryBar
from recall_gui.qt.panels.results_panel import HINT_NO_MATCH, HINT_NO_ROWS, ResultsPanel
from recall_gui.qt.panels.schema_panel import SchemaPanel
from recall_gui.qt.panels.version_bar import VersionBar, pinned_text
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory
from recall_gui.qt.widgets import ElidedLabel

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.browse import BrowseRow, Page, TableInfo
    from recall_gui.core.harness import SearchReport
    from recall_gui.core.health import DatabaseHealth
    from recall_gui.core.target import TableTarget
    from recall_gui.core.versions import TableVersion

ExportFormat = Literal["csv", "json"]


@dataclass(frozen=True)
class Browsing:
    """What the browse table shows."""

    entry: DatabaseEntry
    target: TableTarget
    filter_text: str
    where: str | None
    row_ids: npt.NDArray[np.uint64] | None


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
        self._current: DatabaseEntry | None = None
        #: The "Opened" group's key of the current database, when it is an opened table.
        self._opened_key: str | None = None
        self._info: TableInfo | None = None
        self._generation = 0
        self._busy = False
        self._detail_item: object | None = None
        #: What the browse table shows (what exporting it writes): the database, its table at the version
        #: shown, the text filter, the metadata filter and the rows chosen on the map.
        self._browsing: Browsing | None = None
        #: The caption of the search results shown and the limit they were asked with.
        self._results_caption: tuple[str, int] | None = None
        #: The last search by text shown in this database: (database, query, limit).
        self._searched: tuple[str, str, int] | None = None
        #: The results shown: the limit they were asked with, and the id they are "more like" (if so).
        self._shown_limit = DEFAULT_LIMIT
        self._like: str | None = None
        #: The version of the table shown (``None``: the latest), the versions it has, and the rows
        #: chosen on the map (row ids, and what to call them).
        self._version: int | None = None
        self._versions: tuple[TableVersion, ...] = ()
        self._selection: tuple[npt.NDArray[np.uint64], str] | None = None
        #: The search whose results are shown (the map rings them), if the table shows results.
        self.last_report: SearchReport | None = None

        self.database_bar = DatabaseBar()
        self.opened_bar = OpenedBar()
        self.query_bar = QueryBar()
        self.browse_model = BrowseModel(services.tasks.start)
        self.results = ResultsPanel(self.browse_model)
        self.detail = DetailPanel()
        self.entry_tools = EntryTools()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self._results_column())
        self.splitter.addWidget(self._build_inspection())
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addWidget(self.database_bar)
        layout.addWidget(self.opened_bar)
        layout.addWidget(self.query_bar)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.version_bar)
        layout.addWidget(self.splitter, 1)
        self.status_labels = self._status_labels()
        #: Tables opened from a folder (the database bar's "Opened" group), their dialogs and recents.
        self.opened = OpenedTables(services, self)
        self._connect()

    def _connect(self) -> None:
        """The panels' signals to the operations they start (slots stay thin)."""
        services = self.services
        self.query_bar.searchRequested.connect(self.request_search)
        self.query_bar.cancelRequested.connect(self.cancel)
        self.database_bar.databaseChosen.connect(self._on_database_chosen)
        self.results.entrySelected.connect(self._on_entry_selected)
        self.results.filterChanged.connect(self._on_filter_changed)
        self.entry_tools.moreLikeRequested.connect(self.request_more_like)
        self.entry_tools.addGoldenRequested.connect(self.add_golden_check)
        self.query_bar.limit_spin.valueChanged.connect(
            lambda value: services.memory.set(WindowMemory.LIMIT, value)
        )
        # What the other pages may read of this one: the database, query and limit as they stand.
        self.query_bar.query_edit.textChanged.connect(self._publish_search)
        self.query_bar.limit_spin.valueChanged.connect(self._publish_search)
        services.navigation.entryRequested.connect(self.request_open_entry)
        self.query_bar.limit_spin.valueChanged.connect(self._on_limit_changed)
        self.query_bar.limit_spin.refused.connect(self._on_limit_refused)

    def _build_inspection(self) -> QScrollArea:
        """The metadata filter and version list, the bar marking an older version, and the side tabs:
        the entry detail and the schema view (scrolled when the window is too short for them)."""
        self.filter_bar = FilterBar()
        self.version_bar = VersionBar()
        self.schema_panel = SchemaPanel()
        self.side = QTabWidget()
        self.side.setObjectName("sideTabs")
        self.side.setDocumentMode(True)
        self.side.addTab(self.detail, "Entry")
        self.side.addTab(self.schema_panel, "Columns")
        self.filter_bar.whereChanged.connect(self._on_where_changed)
        self.filter_bar.versionChosen.connect(self._on_version_chosen)
        self.filter_bar.schemaRequested.connect(lambda: self.side.setCurrentWidget(self.schema_panel))
        self.schema_panel.columnActivated.connect(self.filter_bar.insert_column)
        self.version_bar.latestRequested.connect(lambda: self._on_version_chosen(None))
        scroller = QScrollArea()
        scroller.setObjectName("sideScroller")
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(self.side)
        bar = scroller.verticalScrollBar().sizeHint().width()
        scroller.setMinimumWidth(self.side.minimumSizeHint().width() + bar)
        return scroller

    @property
    def current(self) -> DatabaseEntry | None:
        return self._current

    def _publish_search(self) -> None:
        inputs = self.read_inputs()
        self.services.drafts.publish_search(SearchDraft(self._current, inputs.query, inputs.limit))

    @property
    def table_info(self) -> TableInfo | None:
        """The current database's table as last checked (``None`` until read, or if it cannot be)."""
        return self._info

    def _results_column(self) -> QWidget:
        """The table, and under it what to do with the selected row (the detail beside it is taller)."""
        column = QWidget()
        layout = QVBoxLayout(column)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.results, 1)
        layout.addWidget(self.entry_tools)
        return column

    # --- status ---------------------------------------------------------------------------------------

    def _status_labels(self) -> list[QLabel]:
        """Result count, embedding time, search time and model of the last search (for the status bar)."""
        self.status_count = QLabel()
        self.status_count.setObjectName("statusCount")
        self.status_embed = QLabel()
        self.status_embed.setObjectName("statusEmbed")
        self.status_search = ElidedLabel()
        self.status_search.setObjectName("statusSearch")
        self.status_model = ElidedLabel()
        self.status_model.setObjectName("statusModel")
        return [self.status_count, self.status_embed, self.status_search, self.status_model]

    def _show_search_status(self, report: SearchReport | None) -> None:
        if report is None:
            for label in self.status_labels:
                label.clear()
            return
        result = report.result
        self.status_count.setText(plural(len(result.hits), "result"))
        self.status_embed.setText(f"Embedding {report.embed_ms:.1f} ms")
        self.status_search.setText(
            f"Search {result.search_ms:.1f} ms ({result.method_label}, {result.metric_label})"
        )
        self.status_search.setToolTip(result.note or "")
        self.status_model.setText(f"Model: {report.model_used}")
        self.status_model.setToolTip(f"{report.database.embedder.label} — total {report.total_ms:.1f} ms")

    def _set_busy(self, text: str | None) -> None:
        self._busy = text is not None
        self.query_bar.set_busy(self._busy)
        self.services.set_activity(text or "Ready")

    # --- the registry ---------------------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        """Show a new registry snapshot; the current database stays chosen while it is listed."""
        self.database_bar.set_registry(registry)
        if self._current is not None and self._current.origin == "registry":
            self._current = registry.get(self._current.name)
            self.database_bar.select(self._current.name if self._current else None)
        self._publish_search()

    def show_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        self.database_bar.set_health(healths)

    def empty_hint(self, text: str) -> None:
        """What the results table says while there is nothing to show (e.g. while the demo is built)."""
        self.results.show_result(None, "", text)

    # --- operations -----------------------------------------------------------------------------------

    def read_inputs(self) -> Inputs:
        """What the user typed; slots read it when they start an operation, operations never do."""
        return Inputs(
            self.query_bar.query(),
            self.query_bar.limit(),
            self.results.filter_text(),
            self.filter_bar.where(),
        )

    def _supersede(self) -> int:
        """Start a new request: results of every earlier one will be dropped."""
        self._generation += 1
        return self._generation

    async def choose_database(self, name: str | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Make ``name`` the current database: show its facts and health, then search it for
        ``inputs.query`` (or browse it when the query is empty), unless a newer request came meanwhile."""
        await self._open_database(self._switch_to(name), inputs)

    async def choose_opened(self, key: str, entry: DatabaseEntry, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Make the opened table ``entry`` (listed under ``key`` in the "Opened" group) the current
        database, as :meth:`choose_database` does for a registered one."""
        self._opened_key = key
        await self._open_database(self._switch_to(None, entry), inputs)

    def show_opened(self, key: str, entry: DatabaseEntry) -> None:
        """:meth:`choose_opened` from a slot: the switch happens now, the opening as a kept task."""
        inputs = self.read_inputs()
        self._opened_key = key
        self.services.tasks.start(self._open_database(self._switch_to(None, entry), inputs), key="choose")

    def _is_current(self, entry: DatabaseEntry) -> bool:
        """Whether ``entry`` is still the database chosen (a registered one by name, an opened one as is)."""
        current = self._current
        if current is None or current.origin != entry.origin:
            return False
        return current.name == entry.name if entry.origin == "registry" else current.target == entry.target

    def _show_entry_health(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        if entry.origin == "opened" and self._opened_key is not None:
            self.database_bar.set_opened_health(self._opened_key, health)
        else:
            self.database_bar.set_health({entry.name: health})
        if entry.origin == "opened":
            self.opened_bar.show_entry(entry, health.info.columns.vector_dim if health.info else None)

    def _switch_to(self, name: str | None, opened: DatabaseEntry | None = None) -> int:
        """Choosing, the part that takes no time: from now on requests go to ``name``, and every earlier
        one is void. Done at once when the user chooses, so that a search entered right after it (even one
        whose key press was queued behind the choice) is newer than the choice. Returns its generation."""
        services = self.services
        entry = opened if opened is not None else services.registry.get(name) if name else None
        services.tasks.cancel("search")  # a search in the previous database must not land here
        generation = self._supersede()
        self._current = entry
        self._info = None
        self._publish_search()
        self._searched = None
        self._version, self._versions, self._selection = None, (), None
        self.filter_bar.clear_where()  # a filter names one table's columns
        self.filter_bar.set_versions(())
        self.version_bar.show_latest()
        self.schema_panel.clear("Reading the columns…" if entry else "Choose a database to see its columns.")
        self.scopeChanged.emit()
        if opened is not None and self._opened_key is not None:
            self.database_bar.select_opened(self._opened_key)
        else:
            self._opened_key = None
            self.database_bar.select(name)
        self.opened_bar.show_entry(entry, None)
        self._on_entry_selected(None)
        if entry is None:
            self.browse_model.reset(None)
            self._browsing = None
            self.results.show_result(None, "", self._no_database_hint())
        else:
            if entry.origin == "registry":
                services.memory.set(WindowMemory.DATABASE, entry.name)
            services.dismiss("database", "search")  # about the previous database, or a search in it
        return generation

    async def _open_database(self, generation: int, inputs: Inputs) -> None:
        """Check the database just chosen, show its health, then show its rows for ``inputs``."""
        entry, services = self._current, self.services
        if entry is None:
            return
        session = await services.session()
        from recall_gui.core.health import check_health

        health = await check_health(session, entry)
        if not self._is_current(entry):
            return  # another database was chosen meanwhile
        self._show_entry_health(entry, health)
        self._info = health.info
        if health.problems:
            problem = health.problems[0]
            services.show_message(
                UserMessage(f"{entry.name}: {problem.message}", problem.hint, "warning", "database")
            )
        else:
            services.tasks.start(self._preload_model(entry, health))
            services.tasks.start(self._prepare_table(entry), key="prepare")
            services.tasks.start(self.load_table_facts(entry), key="table-facts")
        if generation != self._generation:
            return  # a newer request (a search entered while the database was checked) shows its outcome
        if health.info is None:  # the table cannot be read
            self._supersede()
            self.browse_model.reset(None)
            self._browsing = None
            self._show_search_status(None)
            self._set_busy(None)
            why = health.problems[0].message if health.problems else "the table cannot be read"
            # The caption says why in its own words: the banner may be dismissed, or replaced.
            self.results.show_browse(f"{entry.name} cannot be read: {why}", "No rows to show.")
            return
        if inputs.query.strip():
            await self.search(inputs)
        else:
            await self.browse(inputs)

    def _no_database_hint(self) -> str:
        registry, location = self.services.registry, self.services.location
        if registry.databases:
            return "Choose a database above."
        if location.is_app_registry:
            return (
                "No knowledge base is registered yet. Build the demo with File ▸ Build Demo Knowledge Base, "
                "or add one with cosh."
            )
        wrong_folder = location_problem(location)
        if wrong_folder is not None:
            return f"{sentence(wrong_folder.message)}. {wrong_folder.hint}"
        advice = empty_registry_hint(location.directory)
        return f"The registry in {location.directory} lists no database. {advice}"

    async def _preload_model(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        """Load the database's model in the background, so the first search does not wait for it; a model
        that fails to load is reported now (and marked in the dropdown), not only at the first search."""
        if health.info is None:
            return
        session = await self.services.session()
        try:
            await session.models.get(entry.embedder, health.info.columns.vector_dim)
        except RecallError as error:
            if not self._is_current(entry):
                return  # another database was chosen meanwhile; a search in this one will say it
            from recall_gui.core.health import HealthProblem

            problem = HealthProblem("model", error.message, error.hint)
            self._show_entry_health(entry, replace(health, problems=(*health.problems, problem)))
            self.services.show_message(
                UserMessage(f"{entry.name}: {problem.message}", problem.hint, "warning", "database")
            )

    async def _prepare_table(self, entry: DatabaseEntry) -> None:
        """Read the table's vectors into memory now, so the first search is already the fast one."""
        from recall_gui.core.nearest import prepare

        with contextlib.suppress(RecallError):  # a search on it will say what is wrong
            await prepare(await self.services.session(), entry.target)

    async def search(self, inputs: Inputs) -> None:
        """Run the agent's search on the current database; an empty query browses instead."""
        entry, query, limit = self._current, inputs.query, inputs.limit
        services = self.services
        if entry is None:
            services.show_message(
                UserMessage(
                    "Choose a database first.",
                    "Pick one in the Database list (F5 reloads it).",
                    "warning",
                    "search",
                )
            )
            return
        if not query.strip():
            await self.browse(inputs)
            return
        generation = self._supersede()
        self._results_caption = None
        self._set_busy(f"Searching {entry.name}…")
        try:
            report = await (await services.harness()).search_database(
                entry, query, limit, where=inputs.where or None, version=self._version
            )
        except RecallError as error:
            if generation == self._generation:
                self._set_busy(None)
                services.show_error(error, "search")
                self._show_search_status(None)
                self.results.show_result(
                    None, f"The search in {entry.name} failed: {error.message}", "No results."
                )
                self.searchFinished.emit()
            return
        finally:
            if generation == self._generation and self._busy:
                self._set_busy(None)
        if generation != self._generation:
            return
        services.dismiss("search")
        if len(query) >= MAX_QUERY_CHARS:
            services.show_message(
                UserMessage(
                    f"The query box holds at most {MAX_QUERY_CHARS:,} characters: a longer paste is cut "
                    "there, and these results are for the text it holds.",
                    "Embedding models read only the start of a long query (local ones its first 256 "
                    "tokens), so the results are the same as for the whole text.",
                    "info",
                    "search",
                )
            )
        if report.result.note:
            services.show_message(
                UserMessage(
                    f"Searched with {report.result.method_label}: {report.result.note}.",
                    None,
                    "info",
                    "search",
                )
            )
        hits = len(report.result.hits)
        caption = f"{plural(hits, 'result')} for {quoted(query)} in {entry.name}{self._scope(inputs)}"
        self._searched, self._shown_limit, self._like = (entry.name, query, limit), limit, None
        self.last_report = report
        self.results.show_result(report.result, caption)
        self._results_caption = (caption, limit)
        self._on_limit_changed(self.query_bar.limit())  # changed while it searched
        self._show_search_status(report)
        self.searchFinished.emit()

    async def browse(self, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show every row of the current database whose id or content contains ``inputs.filter_text``."""
        entry = self._current
        if entry is None:
            return
        self._supersede()
        self.last_report = None
        filter_text = inputs.filter_text.strip()
        session = await self.services.session()
        from recall_gui.core.browse import fetch_page

        target, where, selection = self.target(), inputs.where or None, self._selection

        async def fetch(offset: int, limit: int) -> Page:
            if selection is not None:
                from recall_gui.core.selection import fetch_selected_page

                return await fetch_selected_page(
                    session,
                    target,
                    selection[0],
                    offset=offset,
                    limit=limit,
                    filter_text=filter_text,
                    where=where,
                )
            return await fetch_page(
                session, target, offset=offset, limit=limit, filter_text=filter_text, where=where
            )

        self.browse_model.reset(fetch, self._metadata_columns())
        self._browsing = Browsing(entry, target, filter_text, where, selection[0] if selection else None)
        self._results_caption = None
        generation = self.browse_model.generation
        self.results.show_browse(f"Reading {entry.name}…")
        self._show_search_status(None)
        try:
            await self.browse_model.load_first_page()
        except RecallError as error:
            if generation == self.browse_model.generation:
                self.services.show_error(error, "search")
                self.results.set_caption(f"The rows of {entry.name} could not be read: {error.message}")
                self.results.set_browse_placeholder("No rows to show.")
            return
        if generation != self.browse_model.generation:
            return
        total = self.browse_model.total or 0
        if selection is not None:
            caption = f"{plural(total, 'row')} {selection[1]} in {entry.name}"
            if filter_text:
                caption += f" that contain {quoted(filter_text)}"
        elif filter_text:
            caption = f"{plural(total, 'row')} of {entry.name} contain {quoted(filter_text)}"
        elif where:
            caption = f"{plural(total, 'row')} of {entry.name}"
        else:
            caption = f"All {plural(total, 'row')} of {entry.name}"
        self.results.set_caption(caption + self._scope(inputs))
        self.results.set_browse_placeholder(HINT_NO_MATCH if filter_text else HINT_NO_ROWS)
        self.services.set_activity(f"Page read in {self.browse_model.last_fetch_ms or 0:.1f} ms")
        self.browseReady.emit()

    def _metadata_columns(self) -> list[str]:
        return self._info.metadata_columns if self._info is not None else []

    def cancel(self) -> bool:
        """Stop the running search (Esc); its results will never be shown. ``False`` if none was running."""
        tasks = self.services.tasks
        stopped = tasks.cancel("search") | tasks.cancel("choose")
        if not (stopped or self._busy):
            return False
        self._supersede()
        self._set_busy(None)
        self.services.set_activity("Search cancelled")
        return True

    # --- what is looked at: the version, the metadata filter, rows chosen on the map ----------------

    @property
    def version(self) -> int | None:
        """The version of the table shown; ``None`` for the latest."""
        return self._version

    @property
    def versions(self) -> tuple[TableVersion, ...]:
        return self._versions

    @property
    def selection(self) -> tuple[npt.NDArray[np.uint64], str] | None:
        """The rows chosen on the map that browsing shows (row ids, and what to call them), if any."""
        return self._selection

    def target(self) -> TableTarget:
        """The current database's table at the version shown."""
        if self._current is None:
            raise RuntimeError("no database is chosen")
        return self._current.target.at(self._version)

    def _latest_number(self) -> int | None:
        return next((version.version for version in self._versions if version.latest), None)

    def _at(self) -> str:
        return f" · version {self._version}, not the latest" if self._version is not None else ""

    def _scope(self, inputs: Inputs) -> str:
        """What the caption adds about the version and the filter."""
        parts = []
        if self._version is not None:
            parts.append(f"version {self._version}, not the latest")
        if inputs.where:
            parts.append(f"where {quoted(inputs.where)}")
        return f" — {'; '.join(parts)}" if parts else ""

    async def load_table_facts(self, entry: DatabaseEntry) -> None:
        """The table's versions and the columns of the version shown, for the version list and the
        schema view."""
        from recall_gui.core.schema_view import describe_schema
        from recall_gui.core.versions import list_versions

        session = await self.services.session()
        try:
            versions = await list_versions(session, entry.target)
            facts = await describe_schema(session, entry.target.at(self._version))
        except RecallError as error:
            if self._current is not None and self._current.name == entry.name:
                self.schema_panel.clear(f"The columns could not be read: {error.message}")
            return
        if self._current is None or self._current.name != entry.name:
            return  # another database was chosen meanwhile
        self._versions = versions
        self.filter_bar.set_versions(versions, self._version)
        self._show_version_bar()
        self.schema_panel.show_facts(facts)

    def _show_version_bar(self) -> None:
        if self._current is None or self._version is None:
            self.version_bar.show_latest()
            return
        version = next((v for v in self._versions if v.version == self._version), None)
        self.version_bar.show_pinned(
            pinned_text(self._current.name, version, self._version, self._latest_number())
        )

    async def open_version(self, version: int | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show ``version`` of the current table, read-only (``None``: the latest), then search or browse
        it as ``inputs`` say."""
        entry = self._current
        if entry is None:
            return
        if version is not None and version == self._latest_number():
            version = None  # the latest version is the table as it is: it follows new writes
        self._version = version
        self._selection = None  # rows chosen on a map of another version
        self.filter_bar.select_version(version)
        self._show_version_bar()
        self._on_entry_selected(None)
        self.scopeChanged.emit()
        await self.load_table_facts(entry)
        if self._current is not entry:
            return
        if inputs.query.strip():
            await self.search(inputs)
        else:
            await self.browse(inputs)

    async def show_selection(self, row_ids: npt.NDArray[np.uint64], label: str, inputs: Inputs) -> None:
        """Browse only the rows ``row_ids`` of the table shown (chosen on the map)."""
        self._selection = (row_ids, label)
        await self.browse(inputs._replace(query=""))

    async def clear_selection(self, inputs: Inputs) -> None:
        self._selection = None
        await self.browse(inputs._replace(query=""))

    async def open_row(self, row_id: int, how: str = "chosen on the map") -> SearchHit | None:
        """Show the row with LanceDB row id ``row_id`` in the entry detail (vector included)."""
        entry = self._current
        if entry is None:
            return None
        from recall_gui.core.browse import fetch_row

        hit = await fetch_row(await self.services.session(), self.target(), row_id)
        if hit is None or self._current is not entry:
            return hit
        self._detail_item = hit
        self.side.setCurrentWidget(self.detail)
        self.detail.show_entry(
            entry_id=hit.id,
            content=hit.content,
            position=f"row id {row_id}, {how}{self._at()}",
            metadata=hit.extra,
            vector=hit.vector,
            norm=hit.vector_norm,
        )
        return hit

    def _on_where_changed(self, _where: str) -> None:
        self.services.tasks.start(self.search(self.read_inputs()), key="search")

    def _on_version_chosen(self, version: object) -> None:
        number = version if isinstance(version, int) else None
        self.services.tasks.start(self.open_version(number, self.read_inputs()), key="search")

    # --- the entry detail -----------------------------------------------------------------------------

    def _on_entry_selected(self, item: object) -> None:
        if item is self._detail_item and item is not None:
            return  # the same row again (selection and current row change together)
        self._detail_item = item
        if item is not None:
            self.side.setCurrentWidget(self.detail)
        if item is None:
            self.detail.clear()
        elif isinstance(item, SearchHit):
            self._show_hit(item)
        else:
            self._show_row(item)  # type: ignore[arg-type]
        self._show_entry_tools(item)

    def _show_hit(self, hit: SearchHit) -> None:
        result = self.results.results_model.result
        rank = result.hits.index(hit) + 1 if result and hit in result.hits else 0
        metric = result.metric_label if result else ""
        self.detail.show_entry(
            entry_id=hit.id,
            content=hit.content,
            position=f"rank {rank} · distance {hit.distance:.6f} ({metric})" + self._at(),
            metadata=hit.extra,
            vector=hit.vector,
            norm=hit.vector_norm,
        )

    def _show_row(self, row: BrowseRow) -> None:
        total = self.browse_model.total
        self.detail.show_entry(
            entry_id=row.id,
            content=row.content,
            position=f"row {row.offset + 1:,}" + (f" of {total:,}" if total is not None else "") + self._at(),
            metadata=row.extra,
            vector=None,
            norm=None,
            vector_pending=row.row_id is not None,
            highlight=self._browsing.filter_text if self._browsing is not None else "",
        )
        if row.row_id is not None:
            self.services.tasks.start(self.load_vector(row), key="detail")

    async def load_vector(self, row: BrowseRow) -> None:
        """Read a browsed row's vector (pages leave vectors out) and show it if the row is still open."""
        entry = self._current
        if entry is None or row.row_id is None:
            return
        from recall_gui.core.browse import fetch_row

        hit = await fetch_row(await self.services.session(), self.target(), row.row_id)
        if self._detail_item is row:
            self.detail.set_vector(hit.vector if hit else None, hit.vector_norm if hit else None)

    async def open_entry(self, name: str, entry_id: str) -> bool:
        """Show entry ``entry_id`` of database ``name``: its rows browsed with the id as filter, the row
        with exactly that id selected and open in the detail. ``False`` when it cannot be shown (the
        banner says why)."""
        services = self.services
        if services.registry.get(name) is None:
            services.show_message(
                UserMessage(
                    f"{name} is not in the registry the window shows ({services.location.directory}).",
                    "The call may have gone to a server of another registry.",
                    "warning",
                    "database",
                )
            )
            return False
        self.query_bar.query_edit.clear()
        self.results.filter_edit.setText(entry_id)
        inputs = self.read_inputs()
        if self._current is not None and self._current.name == name:
            await self.browse(inputs)
        else:
            await self._open_database(self._switch_to(name), inputs)
        if self.browse_model.total is None:
            return False  # the table could not be read (the banner says why), or a newer request came
        page = self.browse_model.cache.locate(0)
        rows = page[0].ids if page is not None else ()
        if entry_id not in rows:
            services.show_message(
                UserMessage(f"{name} holds no entry with the id {entry_id!r} now.", None, "info", "database")
            )
            return False
        index = self.browse_model.index(rows.index(entry_id), 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.results.browse_table.selectionModel().setCurrentIndex(index, flags)
        self.results.browse_table.scrollTo(index)
        return True

    def request_open_entry(self, name: str, entry_id: str) -> None:
        self.services.tasks.start(self.open_entry(name, entry_id), key="search")

    # --- the selected entry: more like it, a golden check, would the agent see it ----------------------

    def _show_entry_tools(self, item: object) -> None:
        tools, entry, searched = self.entry_tools, self._current, self._searched
        self.services.tasks.cancel("visibility")
        is_hit = isinstance(item, SearchHit)
        golden = is_hit and self._like is None and searched is not None
        tip = None if golden else "Search for a question first, then select the rows it must return"
        tools.set_enabled(
            more_like=item is not None and entry is not None, golden=golden, golden_tip=tip or ""
        )
        if item is None or entry is None:
            tools.show_verdict(NO_QUERY, "neutral")
            return
        if isinstance(item, SearchHit):
            result = self.results.results_model.result
            if result is None or item not in result.hits:
                return
            if self._like is not None:
                rank = result.hits.index(item) + 1
                tools.show_verdict(
                    f"{rank:,} of the entries most like “{self._like}”, at distance {item.distance:.4f} "
                    f"({result.metric_label}).",
                    "neutral",
                )
                return
            from recall_gui.core.visibility import in_result

            tools.show_visibility(in_result(result, item, self._shown_limit), active=entry.active)
            return
        row: BrowseRow = item  # type: ignore[assignment]
        typed = self.query_bar.query()
        query = typed if typed.strip() else (searched[1] if searched else "")
        if row.row_id is None or not query.strip():
            tools.show_verdict(NO_QUERY, "neutral")
            return
        tools.show_verdict(f"Ranking this entry for {quoted(query)}…", "neutral")
        limit = self.query_bar.limit()
        self.services.tasks.start(self.show_visibility(row, query, limit), key="visibility")

    async def show_visibility(self, row: BrowseRow, query: str, limit: int) -> None:
        """Where the browsed ``row`` ranks for ``query`` with ``limit``, shown if it is still selected."""
        entry = self._current
        if entry is None or row.row_id is None:
            return
        from recall_gui.core.visibility import would_agent_see

        harness = await self.services.harness()
        try:
            visibility = await would_agent_see(harness, entry, query, limit, row.row_id, entry_id=row.id)
        except RecallError as error:
            if self._detail_item is row:
                self.entry_tools.show_verdict(f"Cannot tell where it ranks: {error.message}", "warning")
                self.visibilityShown.emit()
            return
        if self._detail_item is row and self._current is entry:
            self.entry_tools.show_visibility(visibility, active=entry.active)
            self.visibilityShown.emit()

    def request_more_like(self) -> None:
        item = self._detail_item
        if item is not None and self._current is not None:
            self.services.tasks.start(self.more_like_this(item, self.query_bar.limit()), key="search")

    async def more_like_this(self, item: object, limit: int) -> None:
        """Search the current database with ``item``'s stored vector and show the entries most like it."""
        entry, services = self._current, self.services
        if entry is None:
            return
        from recall_gui.core.browse import fetch_row
        from recall_gui.core.similar import more_like

        generation = self._supersede()
        self._set_busy(f"Searching {entry.name} for entries like the selected one…")
        try:
            hit: SearchHit | None = item if isinstance(item, SearchHit) else None
            row_id = getattr(item, "row_id", None)
            if (hit is None or hit.vector is None) and row_id is not None:
                hit = await fetch_row(await services.session(), entry.target, row_id)
            if hit is None:
                raise RecallError("the selected entry is no longer in the table", hint="Browse it again.")
            report = await more_like(await services.harness(), entry, hit, limit)
        except RecallError as error:
            if generation == self._generation:
                services.show_error(error, "search")
                self.searchFinished.emit()
            return
        finally:
            if generation == self._generation and self._busy:
                self._set_busy(None)
        if generation != self._generation:
            return
        services.dismiss("search")
        found = len(report.result.hits)
        caption = (
            f"{found:,} entr{'y' if found == 1 else 'ies'} most like {quoted(hit.id)} in {entry.name} "
            "(searched with its stored vector)"
        )
        self._shown_limit, self._like = limit, hit.id
        self._results_caption = None  # Enter searches the query box, not more like this entry
        self.results.show_result(report.result, caption)
        self._show_search_status(report)
        self.searchFinished.emit()

    def add_golden_check(self) -> GoldenCheck | None:
        """Save the last query, with the selected result rows as the ids it must return, as a golden check
        (in the golden file the Checks page shows). Returns the check, ``None`` if there was none to add."""
        entry, searched, services = self._current, self._searched, self.services
        selected = (
            self.results.selected_items() if self.results.mode == "results" and self._like is None else []
        )
        ids = tuple(dict.fromkeys(item.id for item in selected if isinstance(item, SearchHit)))
        if entry is None or searched is None or not ids:
            services.show_message(
                UserMessage(
                    "Nothing to add as a golden check.",
                    "Search for a question, select the rows the agent must get for it, then add them.",
                    "warning",
                    "search",
                )
            )
            return None
        name, query, limit = searched
        check = GoldenCheck(name, query, ids, limit)
        golden = services.golden
        try:
            replaced = golden.add(check)
        except GoldenFileError as error:
            services.show_message(
                UserMessage(
                    f"The golden check is kept, but not saved: {error.message}",
                    "Save the checks to another file on the Checks page (Save As…).",
                    "warning",
                )
            )
            return check
        done = "Updated" if replaced else "Added"
        services.set_activity(
            f"{done} the golden check {quoted(query)} ({plural(len(ids), 'id')}, limit {limit}) "
            f"in {golden.path.name}"
        )
        if not entry.active:
            services.show_message(
                UserMessage(
                    f"{name} is not active: agents cannot search it, so this check cannot run until it is.",
                    "Activate it on the Agent's tool description page.",
                    "warning",
                )
            )
        return check

    # --- export ---------------------------------------------------------------------------------------

    async def export_to(self, path: Path, fmt: ExportFormat) -> int:
        """Write the search results as shown, or every row of the browsed table (that its filter keeps),
        to ``path`` as CSV or JSON; returns the number of rows written."""
        if self.results.mode == "browse":
            return await self.export_browsed(path, fmt)
        table = self.results.shown_results()
        text = to_csv(table) if fmt == "csv" else to_json(table)
        try:
            write_text_atomic(path, text)
        except OSError as error:
            self.services.show_message(
                UserMessage(f"Could not write {path}: {error.strerror or error}", "Choose another folder.")
            )
            return 0
        self.services.set_activity(f"Exported {plural(len(table.rows), 'row')} to {path}")
        return len(table.rows)

    async def export_browsed(self, path: Path, fmt: ExportFormat) -> int:
        """Every row of the browsed table that its filter keeps — not only the rows read so far — streamed
        to ``path`` behind a progress dialog whose Cancel leaves no file; returns the rows written."""
        if self._browsing is None:
            self.services.show_message(
                UserMessage("There are no rows to export.", "Choose a database that can be read.", "info")
            )
            return 0
        browsing = self._browsing
        session = await self.services.session()
        from recall_gui.core.table_export import export_table

        progress = ExportProgress(self, path, asyncio.current_task())
        try:
            columns = self.results.export_columns()
            count = await export_table(
                session,
                browsing.target,
                path,
                fmt,
                columns,
                filter_text=browsing.filter_text,
                where=browsing.where,
                row_ids=browsing.row_ids,
                progress=progress.update,
            )
        except asyncio.CancelledError:
            self.services.set_activity(f"Export cancelled: {path} was not written")
            raise
        except RecallError as error:
            self.services.show_error(error)
            return 0
        finally:
            progress.close()
        self.services.set_activity(f"Exported {plural(count, 'row')} to {path}")
        return count

    def ask_export(self, fmt: ExportFormat) -> None:
        name = self._current.name if self._current else "results"
        if self._current is not None and self._version is not None:
            name += f"-version-{self._version}"
        suggested = str(Path.home() / f"{name}.{fmt}")
        kind = "CSV files (*.csv)" if fmt == "csv" else "JSON files (*.json)"
        path, _filter = QFileDialog.getSaveFileName(self, "Export the table", suggested, kind)
        if path:
            self.services.tasks.start(self.export_to(Path(path), fmt), key="export")

    # --- slots (thin: they read the widgets and start an operation) -----------------------------------

    def request_search(self) -> None:
        problem = self.query_bar.limit_spin.problem()
        if problem is not None:  # the box shows a limit it does not hold: never search with another one
            self._on_limit_refused(problem)
            return
        self.services.tasks.start(self.search(self.read_inputs()), key="search")

    def _on_limit_changed(self, limit: int) -> None:
        """Results found with another limit say so: they are not what the agent would get now."""
        if self._results_caption is None or self.results.mode != "results":
            return
        caption, searched_with = self._results_caption
        if limit != searched_with:
            caption += f" — the limit is now {limit:,}: press Enter to search again"
        self.results.set_caption(caption)

    def _on_limit_refused(self, why: str) -> None:
        self.services.show_message(
            UserMessage(why, "Type a whole number in that range (cosh's default is 5).", "warning", "search")
        )

    def _on_database_chosen(self, name: str) -> None:
        inputs = self.read_inputs()
        self.services.tasks.start(self._open_database(self._switch_to(name), inputs), key="choose")

    def _on_filter_changed(self, _text: str) -> None:
        self.services.tasks.start(self.browse(self.read_inputs()), key="search")

    def browse_all(self) -> None:
        self._selection = None
        self.query_bar.query_edit.clear()
        self.results.filter_edit.clear()  # all rows: an earlier filter would hide some
        self.services.tasks.start(self.browse(self.read_inputs()), key="search")

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
        if self._current is not None and self._current.origin == "registry":
            memory.set(WindowMemory.DATABASE, self._current.name)
