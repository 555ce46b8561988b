"""The knowledge-base page: choose a database, search it as the agent does, browse it, check entries.

Each operation is a plain ``async def`` that tests await directly; the slots read the widgets into
:class:`Inputs` and start the operation as a kept task, so no slot blocks and no failure is lost. A search
or page that finishes after a newer request started is dropped: the newer request cancels the older task
(by key) and bumps a generation counter the older one checks before it shows anything.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from PySide6.QtCore import Qt, Signal
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
from recall_gui.core.errors import RecallError
from recall_gui.core.export import ExportTable, to_csv, to_json
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.core.types import DEFAULT_LIMIT, SearchHit
from recall_gui.qt.messages import UserMessage
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.models.roles import one_line
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.detail_panel import DetailPanel
from recall_gui.qt.panels.filter_bar import FilterBar
from recall_gui.qt.panels.query_bar import MAX_LIMIT, MAX_QUERY_CHARS, QueryBar
from recall_gui.qt.panels.results_panel import HINT_NO_MATCH, HINT_NO_ROWS, ResultsPanel
from recall_gui.qt.panels.schema_panel import SchemaPanel
from recall_gui.qt.panels.version_bar import VersionBar, pinned_text
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory

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


class Inputs(NamedTuple):
    """What the user asked for, read from the widgets when an operation starts."""

    query: str = ""
    limit: int = DEFAULT_LIMIT
    filter_text: str = ""
    #: The metadata filter (a LanceDB SQL predicate); empty for none.
    where: str = ""


EMPTY_INPUTS = Inputs()


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


#: How much of a query (or filter) the caption above the table quotes; the query box holds all of it.
CAPTION_QUOTE_CHARS = 80
#: Characters that change the writing direction of the text after them (embeddings, overrides, isolates).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _visible(char: str) -> str:
    """A control character as the symbol Unicode has for it (␀, ␇, ␛ …); any other character as it is."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0x80 <= code < 0xA0:
        return "\ufffd"
    return char


def _quoted(text: str) -> str:
    """``text`` as the caption quotes it: on one line, at most :data:`CAPTION_QUOTE_CHARS` characters,
    control characters shown as symbols, and a direction override in it kept inside the quotes (a pasted
    U+202E would otherwise turn the rest of the caption around)."""
    line = "".join(_visible(char) for char in one_line(text, CAPTION_QUOTE_CHARS))
    if any(char in _BIDI_CONTROLS for char in line):
        line = f"\u2068{line}\u2069"  # first-strong isolate … pop directional isolate
    return f"“{line}”"


class KnowledgePage(QWidget):
    """``dbCombo``, ``queryEdit``, ``limitSpin``, ``resultsTable``/``browseTable`` and the entry detail."""

    #: The latest search finished: its rows (or its error) are shown.
    searchFinished = Signal()
    #: The first page of the table (or of the filtered rows) is shown.
    browseReady = Signal()
    #: What the page looks at changed: another database, another version of its table.
    scopeChanged = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgePage")
        self.services = services
        self._current: DatabaseEntry | None = None
        self._info: TableInfo | None = None
        self._generation = 0
        self._busy = False
        self._detail_item: object | None = None
        #: The version of the table shown (``None``: the latest), the versions it has, and the rows
        #: chosen on the map (row ids, and what to call them).
        self._version: int | None = None
        self._versions: tuple[TableVersion, ...] = ()
        self._selection: tuple[npt.NDArray[np.uint64], str] | None = None
        #: The search whose results are shown (the map rings them), if the table shows results.
        self.last_report: SearchReport | None = None

        self.database_bar = DatabaseBar()
        self.query_bar = QueryBar()
        self.browse_model = BrowseModel(services.tasks.start)
        self.results = ResultsPanel(self.browse_model)
        self.detail = DetailPanel()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.results)
        self.splitter.addWidget(self._build_inspection())
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addWidget(self.database_bar)
        layout.addWidget(self.query_bar)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.version_bar)
        layout.addWidget(self.splitter, 1)
        self.status_labels = self._status_labels()

        self.query_bar.searchRequested.connect(self.request_search)
        self.query_bar.cancelRequested.connect(self.cancel)
        self.database_bar.databaseChosen.connect(self._on_database_chosen)
        self.results.entrySelected.connect(self._on_entry_selected)
        self.results.filterChanged.connect(self._on_filter_changed)
        self.query_bar.limit_spin.valueChanged.connect(
            lambda value: services.memory.set(WindowMemory.LIMIT, value)
        )

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

    # --- status ---------------------------------------------------------------------------------------

    def _status_labels(self) -> list[QLabel]:
        """Result count, embedding time, search time and model of the last search (for the status bar)."""
        self.status_count = QLabel()
        self.status_count.setObjectName("statusCount")
        self.status_embed = QLabel()
        self.status_embed.setObjectName("statusEmbed")
        self.status_search = QLabel()
        self.status_search.setObjectName("statusSearch")
        self.status_model = QLabel()
        self.status_model.setObjectName("statusModel")
        return [self.status_count, self.status_embed, self.status_search, self.status_model]

    def _show_search_status(self, report: SearchReport | None) -> None:
        if report is None:
            for label in self.status_labels:
                label.clear()
            return
        result = report.result
        self.status_count.setText(_plural(len(result.hits), "result"))
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
        if self._current is not None:
            self._current = registry.get(self._current.name)
            self.database_bar.select(self._current.name if self._current else None)

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

    def _switch_to(self, name: str | None) -> int:
        """Choosing, the part that takes no time: from now on requests go to ``name``, and every earlier
        one is void. Done at once when the user chooses, so that a search entered right after it (even one
        whose key press was queued behind the choice) is newer than the choice. Returns its generation."""
        services = self.services
        entry = services.registry.get(name) if name else None
        services.tasks.cancel("search")  # a search in the previous database must not land here
        generation = self._supersede()
        self._current = entry
        self._info = None
        self._version, self._versions, self._selection = None, (), None
        self.filter_bar.clear_where()  # a filter names one table's columns
        self.filter_bar.set_versions(())
        self.version_bar.show_latest()
        self.schema_panel.clear("Reading the columns…" if entry else "Choose a database to see its columns.")
        self.scopeChanged.emit()
        self.database_bar.select(name)
        self._on_entry_selected(None)
        if entry is None:
            self.browse_model.reset(None)
            self.results.show_result(None, "", self._no_database_hint())
        else:
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
        if self._current is None or self._current.name != entry.name:
            return  # another database was chosen meanwhile
        self.database_bar.set_health({entry.name: health})
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
        if health.info is None:  # the table cannot be read: the message above says why
            self._supersede()
            self.browse_model.reset(None)
            self._show_search_status(None)
            self._set_busy(None)
            self.results.show_browse(
                f"{entry.name} cannot be read: see the message above.", "No rows to show."
            )
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
        return f"The registry in {location.directory} lists no database."

    async def _preload_model(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        """Load the database's model in the background, so the first search does not wait for it; a model
        that fails to load is reported now (and marked in the dropdown), not only at the first search."""
        if health.info is None:
            return
        session = await self.services.session()
        try:
            await session.models.get(entry.embedder, health.info.columns.vector_dim)
        except RecallError as error:
            if self._current is None or self._current.name != entry.name:
                return  # another database was chosen meanwhile; a search in this one will say it
            from recall_gui.core.health import HealthProblem

            problem = HealthProblem("model", error.message, error.hint)
            self.database_bar.set_health({entry.name: replace(health, problems=(*health.problems, problem))})
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
                    None, f"The search in {entry.name} failed: see the message above.", "No results."
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
        caption = f"{_plural(hits, 'result')} for {_quoted(query)} in {entry.name}{self._scope(inputs)}"
        self.last_report = report
        self.results.show_result(report.result, caption)
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
        generation = self.browse_model.generation
        self.results.show_browse(f"Reading {entry.name}…")
        self._show_search_status(None)
        try:
            await self.browse_model.load_first_page()
        except RecallError as error:
            if generation == self.browse_model.generation:
                self.services.show_error(error, "search")
                self.results.set_caption(
                    f"The rows of {entry.name} could not be read: see the message above."
                )
                self.results.set_browse_placeholder("No rows to show.")
            return
        if generation != self.browse_model.generation:
            return
        total = self.browse_model.total or 0
        if selection is not None:
            caption = f"{_plural(total, 'row')} {selection[1]} in {entry.name}"
            if filter_text:
                caption += f" that contain {_quoted(filter_text)}"
        elif filter_text:
            caption = f"{_plural(total, 'row')} of {entry.name} contain {_quoted(filter_text)}"
        elif where:
            caption = f"{_plural(total, 'row')} of {entry.name}"
        else:
            caption = f"All {_plural(total, 'row')} of {entry.name}"
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
            parts.append(f"where {_quoted(inputs.where)}")
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

    # --- export ---------------------------------------------------------------------------------------

    async def export_table(self) -> ExportTable:
        """Exactly the rows and columns the table shows, in its order."""
        return await self.results.shown_table()

    async def export_to(self, path: Path, fmt: ExportFormat) -> int:
        """Write the shown rows to ``path`` as CSV or JSON; returns the number of rows written."""
        table = await self.export_table()
        text = to_csv(table) if fmt == "csv" else to_json(table)
        try:
            write_text_atomic(path, text)
        except OSError as error:
            self.services.show_message(
                UserMessage(f"Could not write {path}: {error.strerror or error}", "Choose another folder.")
            )
            return 0
        self.services.set_activity(f"Exported {_plural(len(table.rows), 'row')} to {path}")
        return len(table.rows)

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
        self.services.tasks.start(self.search(self.read_inputs()), key="search")

    def _on_database_chosen(self, name: str) -> None:
        inputs = self.read_inputs()
        self.services.tasks.start(self._open_database(self._switch_to(name), inputs), key="choose")

    def _on_filter_changed(self, _text: str) -> None:
        self.services.tasks.start(self.browse(self.read_inputs()), key="search")

    def browse_all(self) -> None:
        self._selection = None
        self.query_bar.query_edit.clear()
        self.services.tasks.start(self.browse(self.read_inputs()), key="search")

    def focus_query(self) -> None:
        self.query_bar.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query_bar.query_edit.selectAll()

    # --- memory ---------------------------------------------------------------------------------------

    def restore(self, memory: WindowMemory) -> None:
        splitter = memory.bytes(WindowMemory.SPLITTER)
        if splitter is None or not self.splitter.restoreState(splitter):
            self.splitter.setSizes([760, 520])
        limit = memory.integer(WindowMemory.LIMIT, DEFAULT_LIMIT)
        self.query_bar.limit_spin.setValue(min(max(limit, 1), MAX_LIMIT))

    def save(self, memory: WindowMemory) -> None:
        memory.set(WindowMemory.SPLITTER, self.splitter.saveState())
        memory.set(WindowMemory.LIMIT, self.query_bar.limit())
        if self._current is not None:
            memory.set(WindowMemory.DATABASE, self._current.name)
