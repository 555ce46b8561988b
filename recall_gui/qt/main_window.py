"""The main window: composes the panels and runs the operations users start from them.

Each operation is a plain ``async def`` (tests await it directly); the Qt slots only start it as a kept
task (:class:`~recall_gui.qt.tasks.TaskKeeper`), so no slot blocks and no failure is lost. Operations read
the widgets, await the core, and hand the result to a panel; anything a user should read goes through
:func:`~recall_gui.qt.messages.user_message` into the banner. A search or page that finishes after a newer
one started is dropped (task cancellation plus a generation counter).

More pages (an agent view, benchmarks) are added as tabs of :attr:`MainWindow.pages`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from recall_gui import __version__
from recall_gui.core.atomic import write_text_atomic
from recall_gui.core.demo import demo_wanted
from recall_gui.core.errors import DemoBuildCancelled, RecallError
from recall_gui.core.export import ExportTable, to_csv, to_json
from recall_gui.core.paths import RegistryLocation
from recall_gui.core.registry import DatabaseEntry, load_registry
from recall_gui.core.suffix import SuffixStore
from recall_gui.core.types import DEFAULT_LIMIT, SearchHit
from recall_gui.qt.demo_dialog import DemoBuild
from recall_gui.qt.icons import app_icon
from recall_gui.qt.messages import Topic, UserMessage, user_message
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.models.results_model import METRIC_NAMES
from recall_gui.qt.panels.banner import MessageBanner
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.description_panel import DescriptionPanel
from recall_gui.qt.panels.detail_panel import DetailPanel
from recall_gui.qt.panels.query_bar import MAX_LIMIT, QueryBar
from recall_gui.qt.panels.results_panel import HINT_NO_MATCH, HINT_NO_ROWS, ResultsPanel
from recall_gui.qt.registry_watcher import RegistryWatcher
from recall_gui.qt.settings import WindowMemory, open_settings
from recall_gui.qt.tasks import TaskKeeper
from recall_gui.qt.warmup import HeavyModules

if TYPE_CHECKING:
    from recall_gui.core.browse import BrowseRow, Page, TableInfo
    from recall_gui.core.harness import Harness, SearchReport
    from recall_gui.core.health import DatabaseHealth

ExportFormat = Literal["csv", "json"]


class Inputs(NamedTuple):
    """What the user asked for, read from the widgets when an operation starts."""

    query: str = ""
    limit: int = DEFAULT_LIMIT
    filter_text: str = ""


EMPTY_INPUTS = Inputs()

#: Every keyboard shortcut, as Help ▸ Keyboard Shortcuts lists them.
SHORTCUTS = (
    ("Ctrl+L", "focus the query"),
    ("Enter", "search (an empty query browses every row)"),
    ("Esc", "cancel the running search, or close the message"),
    ("Ctrl+C", "copy the selected rows (tab-separated)"),
    ("F5", "reload the registry and re-check the databases"),
    ("Ctrl+B", "browse all rows"),
    ("Ctrl+E / Ctrl+Shift+E", "export the table as CSV / JSON"),
    ("Ctrl+1 / Ctrl+2", "knowledge base / agent's tool description"),
    ("Ctrl+S", "save the description suffix"),
    ("F1", "this list"),
)


class MainWindow(QMainWindow):
    """Search and browse a knowledge base, check entries, and edit what the agent reads."""

    #: The latest search finished: its rows (or its error) are shown.
    searchFinished = Signal()
    #: The first page of the table (or of the filtered rows) is shown.
    browseReady = Signal()
    #: The registry was read again (F5, an edit, or another program's change).
    registryReloaded = Signal()
    #: Start-up finished: libraries loaded, health checked, a database chosen.
    started = Signal()

    def __init__(self, location: RegistryLocation, config_dir: Path) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("recall-gui")
        self.setWindowIcon(app_icon())
        self.location = location
        self.config_dir = config_dir
        self.memory = WindowMemory(open_settings(config_dir))
        self.tasks = TaskKeeper(self.show_error)
        self.heavy = HeavyModules()
        self.registry = load_registry(location.directory)
        self._harness: Harness | None = None
        self._current: DatabaseEntry | None = None
        self._info: TableInfo | None = None
        self._generation = 0
        self._busy = False
        self._detail_item: object | None = None
        self._demo: DemoBuild | None = None

        self.banner = MessageBanner()
        self.database_bar = DatabaseBar()
        self.query_bar = QueryBar()
        self.browse_model = BrowseModel(self.tasks.start)
        self.results = ResultsPanel(self.browse_model)
        self.detail = DetailPanel()
        self.description = DescriptionPanel(SuffixStore(config_dir))
        self.watcher = RegistryWatcher(location.directory, self)
        self._build_layout()
        self._build_status_bar()
        self._build_actions()
        self._connect()
        self._show_registry()
        self._restore()

    # --- layout -------------------------------------------------------------------------------------

    def _build_layout(self) -> None:
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.results)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        search_page = QWidget()
        search_page.setObjectName("searchPage")
        search_layout = QVBoxLayout(search_page)
        search_layout.setContentsMargins(10, 10, 10, 6)
        search_layout.setSpacing(8)
        search_layout.addWidget(self.database_bar)
        search_layout.addWidget(self.query_bar)
        search_layout.addWidget(self.splitter, 1)
        description_page = QWidget()
        description_layout = QVBoxLayout(description_page)
        description_layout.setContentsMargins(10, 10, 10, 6)
        description_layout.addWidget(self.description)

        self.pages = QTabWidget()
        self.pages.setObjectName("pages")
        self.pages.setDocumentMode(True)
        self.pages.addTab(search_page, "Knowledge base")
        self.pages.addTab(description_page, "Agent's tool description")
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        banner_row = QVBoxLayout()
        banner_row.setContentsMargins(10, 0, 10, 0)
        banner_row.addWidget(self.banner)
        layout.addLayout(banner_row)
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status_activity = QLabel("Starting…")
        self.status_activity.setObjectName("statusActivity")
        self.status_count = QLabel()
        self.status_count.setObjectName("statusCount")
        self.status_embed = QLabel()
        self.status_embed.setObjectName("statusEmbed")
        self.status_search = QLabel()
        self.status_search.setObjectName("statusSearch")
        self.status_model = QLabel()
        self.status_model.setObjectName("statusModel")
        bar.addWidget(self.status_activity, 1)
        for label in (self.status_count, self.status_embed, self.status_search, self.status_model):
            label.setContentsMargins(8, 0, 8, 0)
            bar.addPermanentWidget(label)

    def _action(self, text: str, shortcut: Any = None, slot: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        if slot is not None:
            action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.export_csv_action = self._action(
            "Export as &CSV…",
            "Ctrl+E",
            lambda: self._ask_export("csv"),
            "Save the rows the table shows as CSV",
        )
        self.export_json_action = self._action(
            "Export as &JSON…",
            "Ctrl+Shift+E",
            lambda: self._ask_export("json"),
            "Save the rows the table shows as JSON",
        )
        self.reload_action = self._action(
            "&Reload Registry", QKeySequence.StandardKey.Refresh, self._on_reload, "Read the registry again"
        )
        self.reload_action.setShortcuts([QKeySequence("F5")])
        self.demo_action = self._action(
            "Build &Demo Knowledge Base…", None, self._on_build_demo, "Embed Python's help topics as a demo"
        )
        self.demo_action.setEnabled(self.location.is_app_registry)
        quit_action = self._action("&Quit", QKeySequence.StandardKey.Quit, self.close)
        self.focus_query_action = self._action("&Focus Query", "Ctrl+L", self.focus_query)
        self.search_action = self._action("&Search", None, self._on_search_requested)
        self.search_action.setShortcut(QKeySequence("Return"))
        self.search_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # shown in the menu only
        self.cancel_action = self._action("&Cancel Search", "Esc", self._on_escape)
        self.browse_action = self._action(
            "&Browse All Rows", "Ctrl+B", self._on_browse_all, "Show every row of the table"
        )
        self.page_actions = [
            self._action("&Knowledge Base", "Ctrl+1", lambda: self.pages.setCurrentIndex(0)),
            self._action("Agent's &Tool Description", "Ctrl+2", lambda: self.pages.setCurrentIndex(1)),
        ]
        about = self._action("&About recall-gui", None, self._show_about)
        shortcuts = self._action("&Keyboard Shortcuts", "F1", self._show_shortcuts)

        menus = self.menuBar()
        file_menu = menus.addMenu("&File")
        file_menu.addActions([self.export_csv_action, self.export_json_action])
        file_menu.addSeparator()
        file_menu.addActions([self.reload_action, self.demo_action])
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        edit_menu = menus.addMenu("&Edit")
        edit_menu.addAction(self.results.copy_action)
        search_menu = menus.addMenu("&Search")
        search_menu.addActions([self.focus_query_action, self.search_action, self.cancel_action])
        search_menu.addAction(self.browse_action)
        view_menu = menus.addMenu("&View")
        view_menu.addActions(self.page_actions)
        help_menu = menus.addMenu("&Help")
        help_menu.addActions([shortcuts, about])

    def _connect(self) -> None:
        self.query_bar.searchRequested.connect(self._on_search_requested)
        self.query_bar.cancelRequested.connect(self.cancel)
        self.database_bar.databaseChosen.connect(self._on_database_chosen)
        self.results.entrySelected.connect(self._on_entry_selected)
        self.results.filterChanged.connect(self._on_filter_changed)
        self.description.registryEdited.connect(self._on_registry_edited)
        self.description.message.connect(self.show_message)
        self.watcher.touched.connect(self._check_registry)
        self.query_bar.limit_spin.valueChanged.connect(
            lambda value: self.memory.set(WindowMemory.LIMIT, value)
        )

    # --- messages and status ------------------------------------------------------------------------

    def show_message(self, message: UserMessage) -> None:
        self.banner.show_message(message)

    def show_error(self, error: BaseException, topic: Topic = "general") -> None:
        self.show_message(user_message(error, topic))

    def _set_busy(self, text: str | None) -> None:
        self._busy = text is not None
        self.query_bar.set_busy(self._busy)
        self.status_activity.setText(text or "Ready")

    def _show_search_status(self, report: SearchReport | None) -> None:
        if report is None:
            for label in (self.status_count, self.status_embed, self.status_search, self.status_model):
                label.clear()
            return
        result = report.result
        count = len(result.hits)
        self.status_count.setText(f"{count} result{'s' if count != 1 else ''}")
        self.status_embed.setText(f"Embedding {report.embed_ms:.1f} ms")
        metric = METRIC_NAMES.get(result.metric, result.metric)
        method = "index" if result.method.startswith("index") else "flat scan"
        self.status_search.setText(f"Search {result.search_ms:.1f} ms ({method}, {metric})")
        self.status_model.setText(f"Model: {report.model_used}")
        self.status_model.setToolTip(f"{report.database.embedder.label} — total {report.total_ms:.1f} ms")

    # --- start-up -----------------------------------------------------------------------------------

    def begin(self) -> asyncio.Task[Any]:
        """Start the background start-up (see :meth:`start`); the window is usable meanwhile."""
        return self.tasks.start(self.start(), key="start")

    async def start(self) -> None:
        """Load the heavy libraries, build the demo on a first start, check every database, open one."""
        self._set_busy("Loading search libraries…")
        await self.heavy.ready()
        self._set_busy(None)
        if demo_wanted(self.location, self.registry):
            await self.build_demo()
        await self.refresh_health()
        await self.choose_database(self._initial_database(), self.read_inputs())  # typed meanwhile
        self.started.emit()

    def _initial_database(self) -> str | None:
        remembered = self.memory.text(WindowMemory.DATABASE)
        if remembered and self.registry.get(remembered):
            return remembered
        chosen = self.registry.active or self.registry.databases
        return chosen[0].name if chosen else None

    async def harness(self) -> Harness:
        await self.heavy.ready()
        if self._harness is None:
            from recall_gui.core.harness import Harness

            self._harness = Harness(self.location.directory)
        return self._harness

    async def build_demo(self) -> bool:
        """Build the demo behind a cancellable progress dialog, then open it; ``False`` if not built."""
        if self._demo is not None:
            return False
        self._demo = DemoBuild(self, self.location.directory)
        self.status_activity.setText("Building the demo knowledge base…")
        self.results.show_result(None, "", "Building the demo knowledge base…")
        try:
            await self._demo.run()
        except (DemoBuildCancelled, RecallError, OSError) as error:
            self.show_error(error)
            return False
        finally:
            self._demo = None
            self.status_activity.setText("Ready")
        await self.reload_registry()
        self.show_message(
            UserMessage(
                "The demo knowledge base is ready: Python's help topics.",
                "Ask it something, e.g. “how do generators work”, and press Enter.",
                "info",
            )
        )
        return True

    # --- registry -----------------------------------------------------------------------------------

    def _show_registry(self) -> None:
        self.database_bar.set_registry(self.registry)
        self.description.set_registry(self.registry)
        if self.registry.problems:
            first, count = self.registry.problems[0], len(self.registry.problems)
            more = f" (and {count - 1} more)" if count > 1 else ""
            self.show_message(
                UserMessage(
                    f"The registry has a problem: {first}{more}",
                    "The rest of it is used. Fix the file by hand and press F5; recall-gui never "
                    "overwrites a registry file it cannot read.",
                    "warning",
                    "registry",
                )
            )
        self.status_activity.setToolTip(f"Registry: {self.location.directory} ({self.location.source})")

    async def reload_registry(self, *, external: bool = False) -> None:
        """Read the registry again and re-check the databases; keeps the current choice and all edits."""
        self.reread_registry(external=external)
        await self.follow_registry()

    def reread_registry(self, *, external: bool = False) -> None:
        """Take a new snapshot of the registry now (synchronously: after the window's own write, so the
        write is never mistaken for another program's) and show it."""
        self.registry = load_registry(self.location.directory)
        self.watcher.rewatch()
        self._show_registry()
        if external and not self.registry.problems:
            self.show_message(
                UserMessage(
                    "The registry was changed by another program and has been reloaded.",
                    "Anything you had typed or not yet saved is still here.",
                    "info",
                    "registry",
                )
            )
        self.registryReloaded.emit()

    async def follow_registry(self) -> None:
        """After a new snapshot: keep the current database if it is still listed, and re-check health."""
        name = self._current.name if self._current else None
        if name is None or self.registry.get(name) is None:
            await self.refresh_health()
            await self.choose_database(self._initial_database(), self.read_inputs())
            return
        self._current = self.registry.get(name)
        self.database_bar.select(name)
        await self.refresh_health()

    async def refresh_health(self) -> None:
        """Check every database (folder, table, model, dimension) and show the outcome in the dropdown."""
        await self.heavy.ready()
        from recall_gui.core.health import check_health

        entries = self.registry.databases
        healths = await asyncio.gather(*(check_health(entry) for entry in entries))
        self.database_bar.set_health({health.entry.name: health for health in healths})

    def _check_registry(self) -> None:
        if self.registry.changed_on_disk():
            self.reread_registry(external=True)
            self.tasks.start(self.follow_registry(), key="reload")

    # --- choosing, searching, browsing ---------------------------------------------------------------

    def read_inputs(self) -> Inputs:
        """What the user typed; slots read it when they start an operation, operations never do."""
        return Inputs(self.query_bar.query(), self.query_bar.limit(), self.results.filter_text())

    async def choose_database(self, name: str | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Make ``name`` the current database: show its facts and health, then search it for
        ``inputs.query`` (or browse it when the query is empty)."""
        entry = self.registry.get(name) if name else None
        self._current = entry
        self._info = None
        self.database_bar.select(name)
        self._on_entry_selected(None)
        if entry is None:
            self.browse_model.reset(None)
            self.results.show_result(None, "", self._no_database_hint())
            return
        self.memory.set(WindowMemory.DATABASE, entry.name)
        self.banner.dismiss("database", "search")  # about the previous database, or a search in it
        await self.heavy.ready()
        from recall_gui.core.health import check_health

        health = await check_health(entry)
        if self._current is not entry:
            return
        self.database_bar.set_health({entry.name: health})
        self._info = health.info
        if health.problems:
            problem = health.problems[0]
            self.show_message(
                UserMessage(f"{entry.name}: {problem.message}", problem.hint, "warning", "database")
            )
        else:
            self.tasks.start(self._preload_model(entry, health))
        if health.info is None:  # the table cannot be read: the message above says why
            self._supersede()
            self.browse_model.reset(None)
            self._show_search_status(None)
            self.status_activity.setText("Ready")
            self.results.show_browse(
                f"{entry.name} cannot be read: see the message above.", "No rows to show."
            )
            return
        if inputs.query.strip():
            await self.search(inputs)
        else:
            await self.browse(inputs)

    def _no_database_hint(self) -> str:
        if self.registry.databases:
            return "Choose a database above."
        if self.location.is_app_registry:
            return (
                "No knowledge base is registered yet. Build the demo with File ▸ Build Demo Knowledge Base, "
                "or add one with cosh."
            )
        return f"The registry in {self.location.directory} lists no database."

    async def _preload_model(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        """Load the database's model in the background, so the first search does not wait for it."""
        if health.info is None:
            return
        harness = await self.harness()
        try:
            await harness.embedders.get(entry.embedder, health.info.columns.vector_dim)
        except RecallError:
            return  # the search reports it, with what to do

    def _supersede(self) -> int:
        """Start a new request: results of every earlier one will be dropped."""
        self._generation += 1
        return self._generation

    async def search(self, inputs: Inputs) -> None:
        """Run the agent's search on the current database; an empty query browses instead."""
        entry, query, limit = self._current, inputs.query, inputs.limit
        if entry is None:
            self.show_message(
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
            report = await (await self.harness()).search_database(entry, query, limit)
        except RecallError as error:
            if generation == self._generation:
                self._set_busy(None)
                self.show_error(error, "search")
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
        self.banner.dismiss("search")
        count = len(report.result.hits)
        self.results.show_result(
            report.result, f"{count} result{'s' if count != 1 else ''} for “{query}” in {entry.name}"
        )
        self._show_search_status(report)
        self.searchFinished.emit()

    async def browse(self, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show every row of the current database whose id or content contains ``inputs.filter_text``."""
        entry = self._current
        if entry is None:
            return
        self._supersede()
        filter_text = inputs.filter_text.strip()
        await self.heavy.ready()
        from recall_gui.core.browse import fetch_page
        from recall_gui.core.harness import table_options

        options = table_options(entry)

        async def fetch(offset: int, limit: int) -> Page:
            return await fetch_page(
                entry.uri,
                entry.table_name,
                offset=offset,
                limit=limit,
                options=options,
                filter_text=filter_text,
            )

        self.browse_model.reset(fetch, self._metadata_columns())
        generation = self.browse_model.generation
        self.results.show_browse(f"Reading {entry.name}…")
        self._show_search_status(None)
        try:
            await self.browse_model.load_first_page()
        except RecallError as error:
            if generation == self.browse_model.generation:
                self.show_error(error, "search")
                self.results.set_caption(
                    f"The rows of {entry.name} could not be read: see the message above."
                )
                self.results.set_browse_placeholder("No rows to show.")
            return
        if generation != self.browse_model.generation:
            return
        total = self.browse_model.total or 0
        if filter_text:
            caption = f"{total:,} row{'s' if total != 1 else ''} of {entry.name} contain “{filter_text}”"
        else:
            caption = f"All {total:,} row{'s' if total != 1 else ''} of {entry.name}"
        self.results.set_caption(caption)
        self.results.set_browse_placeholder(HINT_NO_MATCH if filter_text else HINT_NO_ROWS)
        self.status_activity.setText(f"Page read in {self.browse_model.last_fetch_ms or 0:.1f} ms")
        self.browseReady.emit()

    def _metadata_columns(self) -> list[str]:
        info = self._info
        if info is None:
            return []
        roles = {info.columns.id, info.columns.content, info.columns.vector}
        return [name for name, _kind in info.schema if name not in roles]

    def cancel(self) -> bool:
        """Stop the running search (Esc); its results will never be shown. ``False`` if none was running."""
        stopped = self.tasks.cancel("search") | self.tasks.cancel("choose")
        if not (stopped or self._busy):
            return False
        self._supersede()
        self._set_busy(None)
        self.status_activity.setText("Search cancelled")
        return True

    # --- entry detail ---------------------------------------------------------------------------------

    def _on_entry_selected(self, item: object) -> None:
        if item is self._detail_item and item is not None:
            return  # the same row again (selection and current row change together)
        self._detail_item = item
        if item is None:
            self.detail.clear()
            return
        if isinstance(item, SearchHit):
            result = self.results.results_model.result
            rank = result.hits.index(item) + 1 if result and item in result.hits else 0
            metric = METRIC_NAMES.get(result.metric, result.metric) if result else ""
            self.detail.show_entry(
                entry_id=item.id,
                content=item.content,
                position=f"rank {rank} · distance {item.distance:.6f} ({metric})",
                metadata=item.extra,
                vector=item.vector,
                norm=item.vector_norm,
            )
            return
        row: BrowseRow = item  # type: ignore[assignment]
        total = self.browse_model.total
        self.detail.show_entry(
            entry_id=row.id,
            content=row.content,
            position=f"row {row.offset + 1:,}" + (f" of {total:,}" if total is not None else ""),
            metadata=row.extra,
            vector=None,
            norm=None,
            vector_pending=row.row_id is not None,
        )
        if row.row_id is not None:
            self.tasks.start(self.load_vector(row), key="detail")

    async def load_vector(self, row: BrowseRow) -> None:
        """Read a browsed row's vector (pages leave vectors out) and show it if the row is still open."""
        entry = self._current
        if entry is None or row.row_id is None:
            return
        from recall_gui.core.browse import fetch_row
        from recall_gui.core.harness import table_options

        hit = await fetch_row(entry.uri, entry.table_name, row.row_id, table_options(entry))
        if self._detail_item is row:
            self.detail.set_vector(hit.vector if hit else None, hit.vector_norm if hit else None)

    # --- export -----------------------------------------------------------------------------------------

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
            self.show_message(
                UserMessage(f"Could not write {path}: {error.strerror or error}", "Choose another folder.")
            )
            return 0
        self.status_activity.setText(f"Exported {len(table.rows):,} rows to {path}")
        return len(table.rows)

    def _ask_export(self, fmt: ExportFormat) -> None:
        name = self._current.name if self._current else "results"
        suggested = str(Path.home() / f"{name}.{fmt}")
        kind = "CSV files (*.csv)" if fmt == "csv" else "JSON files (*.json)"
        path, _filter = QFileDialog.getSaveFileName(self, "Export the table", suggested, kind)
        if path:
            self.tasks.start(self.export_to(Path(path), fmt), key="export")

    # --- slots (thin: they start an operation) ----------------------------------------------------------

    def _on_search_requested(self) -> None:
        self.tasks.start(self.search(self.read_inputs()), key="search")

    def _on_database_chosen(self, name: str) -> None:
        self.tasks.start(self.choose_database(name, self.read_inputs()), key="choose")

    def _on_filter_changed(self, _text: str) -> None:
        self.tasks.start(self.browse(self.read_inputs()), key="search")

    def _on_browse_all(self) -> None:
        self.query_bar.query_edit.clear()
        self.tasks.start(self.browse(self.read_inputs()), key="search")

    def _on_reload(self) -> None:
        self.reread_registry()
        self.tasks.start(self.follow_registry(), key="reload")
        self.status_activity.setText("Registry reloaded")

    def _on_registry_edited(self) -> None:
        self.reread_registry()
        self.tasks.start(self.follow_registry(), key="reload")

    def _on_build_demo(self) -> None:
        self.tasks.start(self.build_demo(), key="demo")

    def _on_escape(self) -> None:
        if not self.cancel():
            self.banner.dismiss()

    def focus_query(self) -> None:
        self.pages.setCurrentIndex(0)
        self.query_bar.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query_bar.query_edit.selectAll()

    def _show_about(self) -> None:
        QMessageBox.about(
            self,
            "About recall-gui",
            f"<b>recall-gui {__version__}</b><p>Browse, search and verify the LanceDB knowledge bases your "
            "agents recall from. It never writes to a knowledge base.</p>"
            f"<p>Registry: {self.location.directory} ({self.location.source})</p>",
        )

    def _show_shortcuts(self) -> None:
        rows = "".join(
            f"<tr><td><b>{keys}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>" for keys, what in SHORTCUTS
        )
        QMessageBox.information(self, "Keyboard shortcuts", f"<table>{rows}</table>")

    # --- memory -----------------------------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self.memory.bytes(WindowMemory.GEOMETRY)
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        splitter = self.memory.bytes(WindowMemory.SPLITTER)
        if splitter is None or not self.splitter.restoreState(splitter):
            self.splitter.setSizes([760, 520])
        description = self.memory.bytes(WindowMemory.DESCRIPTION_SPLITTER)
        if description is not None:
            self.description.splitter.restoreState(description)
        limit = self.memory.integer(WindowMemory.LIMIT, DEFAULT_LIMIT)
        self.query_bar.limit_spin.setValue(min(max(limit, 1), MAX_LIMIT))
        self.pages.setCurrentIndex(
            min(max(self.memory.integer(WindowMemory.PAGE, 0), 0), self.pages.count() - 1)
        )

    def save_state(self) -> None:
        self.memory.set(WindowMemory.GEOMETRY, self.saveGeometry())
        self.memory.set(WindowMemory.SPLITTER, self.splitter.saveState())
        self.memory.set(WindowMemory.DESCRIPTION_SPLITTER, self.description.splitter.saveState())
        self.memory.set(WindowMemory.LIMIT, self.query_bar.limit())
        self.memory.set(WindowMemory.PAGE, self.pages.currentIndex())
        if self._current is not None:
            self.memory.set(WindowMemory.DATABASE, self._current.name)
        self.memory.sync()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            QTimer.singleShot(0, self._check_registry)  # back from an editor: did it change the registry?

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self._demo is not None:
            self._demo.cancel()
        self.tasks.cancel_all()
        super().closeEvent(event)

    async def aclose(self) -> None:
        """Release the embedders (HTTP clients) once the window is closed."""
        if self._harness is not None:
            await self._harness.aclose()
