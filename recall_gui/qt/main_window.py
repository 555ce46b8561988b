"""The main window: the message banner, the pages, the menus, the status bar — and what spans pages:
start-up, the registry (reading, watching, checking health) and what the window remembers.

Pages are tabs of :attr:`MainWindow.pages` that receive :class:`~recall_gui.qt.services.WindowServices`,
not the window; a new page (an agent view, benchmarks) is one more ``addTab``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMenu,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import DemoBuildCancelled, RecallError, RegistryLocation, SettingsStore
from recall_gui.core.demo import demo_wanted
from recall_gui.core.drafts import Drafts
from recall_gui.core.messages import UserMessage, registry_problems_text, sentence, user_message
from recall_gui.core.registry import (
    DatabaseEntry,
    Registry,
    SuffixStore,
    build_tool_suffix,
    load_registry,
    location_problem,
)
from recall_gui.qt.demo_dialog import DemoBuild
from recall_gui.qt.help_menu import show_about, show_shortcuts
from recall_gui.qt.icons import app_icon
from recall_gui.qt.pages.agent_page import AgentPage
from recall_gui.qt.pages.checks_page import ChecksPage
from recall_gui.qt.pages.database_actions import DatabaseActions
from recall_gui.qt.pages.description_page import DescriptionPage
from recall_gui.qt.pages.duplicates_page import DuplicatesPage
from recall_gui.qt.pages.health_page import HealthPage
from recall_gui.qt.pages.history_page import HistoryPage
from recall_gui.qt.pages.knowledge.page import KnowledgePage
from recall_gui.qt.pages.log_page import LogPage
from recall_gui.qt.pages.map_page import MapPage
from recall_gui.qt.pages.opened_tables import folder_of
from recall_gui.qt.pages.reach_page import ReachPage
from recall_gui.qt.panels.banner import MessageBanner
from recall_gui.qt.registry_watcher import RegistryWatcher
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory, open_settings
from recall_gui.qt.shortcuts import ShortcutsFirst
from recall_gui.qt.tasks import TaskKeeper
from recall_gui.qt.widgets import ElidedLabel, PageTabs

if TYPE_CHECKING:
    from recall_gui.core.session import Session

#: The task key of reading the registry (and re-checking the databases after it).
REGISTRY_READ = "reload"
#: The task key of checking the health of the databases past the first :data:`HEALTH_FIRST`.
HEALTH_REST = "health-rest"
#: Databases checked before start-up (or a reload) goes on; the rest in batches of :data:`HEALTH_BATCH`.
HEALTH_FIRST = 200
HEALTH_BATCH = 50
#: A folder or URI to open at start, with its storage options (``recall-gui PATH``).
OpenRequest = tuple[str, Mapping[str, str]]

EXPORT_TIP = "Save the search results, or every row of the browsed table (that the filter keeps), as {}"


def read_snapshot(directory: Path, previous: Registry | None = None) -> tuple[Registry, str]:
    """The registry in ``directory`` with its derived lists, and its database list for the tool
    description: run on a worker, so a large registry never holds the GUI thread. ``previous``: the
    snapshot shown now, whose unchanged entries are reused."""
    registry = load_registry(directory, previous).warmed()
    return registry, build_tool_suffix(registry)


class MainWindow(QMainWindow):
    """Search and browse a knowledge base, check entries, and edit what the agent reads."""

    #: The registry was read again (F5, an edit, or another program's change).
    registryReloaded = Signal()
    #: Start-up finished: libraries loaded, health checked, a database chosen.
    started = Signal()

    def __init__(
        self, location: RegistryLocation, config_dir: Path, open_at_start: OpenRequest | None = None
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("recall-gui")
        self.setWindowIcon(app_icon())
        self.config_dir = config_dir
        self.banner = MessageBanner()
        # Cut to what fits: a long account of the last action took the room of the search's figures.
        self.status_activity = ElidedLabel("Starting…")
        self.status_activity.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status_activity.setObjectName("statusActivity")
        settings, settings_problem = open_settings(config_dir)
        self.services = WindowServices(
            location,
            Registry(location.directory),  # until start() has read it, off this thread
            WindowMemory(settings),
            self.banner,
            self.status_activity,
            drafts=Drafts(SuffixStore(config_dir)),
        )
        self.knowledge = KnowledgePage(self.services)
        self.description = DescriptionPage(self.services)
        self.agent = AgentPage(self.services)
        self.log = LogPage(self.services, SettingsStore(config_dir))
        self.checks = ChecksPage(self.services)
        self.duplicates = DuplicatesPage(self.services)
        self.history = HistoryPage(self.services, self.knowledge)
        self.map = MapPage(self.services, self.knowledge)
        self.health = HealthPage(self.services)
        self.reach = ReachPage(self.services)
        self.opened = self.knowledge.opened
        #: A folder or URI (and its storage options) to open instead of the remembered database.
        self.open_at_start = open_at_start
        self.setAcceptDrops(True)
        self.watcher = RegistryWatcher(location.directory, self)
        self._demo: DemoBuild | None = None
        #: Whether a registry read under way (or superseded by one) was started by another program's change.
        self._external_change = False
        #: Registry reads under way on the worker.
        self._reads = 0
        #: Whether the registry has been read yet (start() reads it): until then the watcher's news wait.
        self._read_once = False

        self.pages = PageTabs()
        self._lay_out()
        self._build_actions()
        self.shortcuts_first = ShortcutsFirst(self)
        self._connect()
        if settings_problem is not None:
            self.show_message(replace(user_message(settings_problem), level="warning"))
        self._show_registry()
        self._restore()

    def _on_page_changed(self, index: int) -> None:
        if self.pages.page(index) is not self.description:
            self.services.dismiss("description")  # "Suffix saved" belongs to the page it was saved on

    def _lay_out(self) -> None:
        """The banner above the pages (one tab each), the status bar below."""
        self.pages.setObjectName("pages")
        self.pages.setDocumentMode(True)
        self.pages.addTab(self.knowledge, "Knowledge base")
        self.pages.addTab(self.description, "Agent's tool description")
        self.pages.addTab(self.agent, "Agent view")
        self.pages.addTab(self.log, "Agent log")
        self.pages.addTab(self.checks, "Checks")
        self.pages.addTab(self.duplicates, "Duplicates")
        self.pages.addTab(self.history, "History")
        self.pages.addTab(self.map, "Map")
        self.pages.addTab(self.health, "Health")
        self.pages.addTab(self.reach, "Reach")
        for page in (self.history, self.map):
            page.showKnowledge.connect(lambda: self.pages.setCurrentWidget(self.knowledge))
        self.pages.currentChanged.connect(self._on_page_changed)
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
        self.statusBar().addWidget(self.status_activity, 1)
        for label in self.knowledge.status_labels:
            label.setContentsMargins(8, 0, 8, 0)
            self.statusBar().addPermanentWidget(label)

    def _connect(self) -> None:
        """What spans pages: registry edits, the registry's changes, and requests to open an entry."""
        self.services.reload_registry = self.reload_registry
        self.description.registryEdited.connect(self._on_registry_edited)
        self.opened.pickerCancelled.connect(self._on_picker_cancelled)
        self.watcher.touched.connect(self._check_registry)
        self.registryReloaded.connect(self.agent.follow_registry)
        self.registryReloaded.connect(self.log.follow_registry)
        self.registryReloaded.connect(self.duplicates.follow_registry)
        self.registryReloaded.connect(self.health.follow_registry)
        self.registryReloaded.connect(self.reach.follow_registry)
        self.registryReloaded.connect(self.checks.follow_registry)
        self.services.navigation.entryRequested.connect(
            lambda *_: self.pages.setCurrentWidget(self.knowledge)
        )

    @property
    def location(self) -> RegistryLocation:
        return self.services.location

    @property
    def registry(self) -> Registry:
        return self.services.registry

    @property
    def tasks(self) -> TaskKeeper:
        return self.services.tasks

    def show_message(self, message: UserMessage) -> None:
        self.services.show_message(message)

    # --- menus and shortcuts --------------------------------------------------------------------------

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
        knowledge = self.knowledge
        self.export_csv_action = self._action(
            "Export as &CSV…", "Ctrl+E", lambda: knowledge.ask_export("csv"), EXPORT_TIP.format("CSV")
        )
        self.export_json_action = self._action(
            "Export as &JSON…",
            "Ctrl+Shift+E",
            lambda: knowledge.ask_export("json"),
            EXPORT_TIP.format("JSON"),
        )
        self.open_folder_action = self._action(
            "&Open Folder…",
            QKeySequence.StandardKey.Open,
            self.ask_folder,
            "Open a LanceDB folder read-only, without registering it",
        )
        self.open_uri_action = self._action(
            "Open &URI…",
            None,
            lambda: self.opened.ask_uri(knowledge.read_inputs()),
            "Open a LanceDB database on object storage (s3://…), read-only",
        )
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.add_to_agents_action = self._action(
            "&Add to Agents' Databases…",
            None,
            self.opened.ask_register,
            "Register the opened table for agents (the dialog says which registry, and who reads it)",
        )
        self.reload_action = self._action(
            "&Reload Registry", "F5", self._on_reload, "Read the registry again"
        )
        self.demo_action = self._action(
            "Build &Demo Knowledge Base…", None, self._on_build_demo, "Add Python's help topics as a demo"
        )
        self.demo_action.setEnabled(self.location.is_app_registry)
        quit_action = self._action("&Quit", QKeySequence.StandardKey.Quit, self.close)
        self.focus_query_action = self._action("&Focus Query", "Ctrl+L", self.focus_query)
        self.search_action = self._action("&Search", None, knowledge.request_search)
        self.search_action.setShortcut(QKeySequence("Return"))
        self.search_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # shown in the menu only
        self.cancel_action = self._action("&Cancel Search", "Esc", self._on_escape)
        self.browse_action = self._action("&Browse All Rows", "Ctrl+B", knowledge.browse_all, "Every row")
        self.page_actions = [
            self._action("&Knowledge Base", "Ctrl+1", lambda: self.pages.setCurrentIndex(0)),
            self._action("Agent's &Tool Description", "Ctrl+2", lambda: self.pages.setCurrentIndex(1)),
            self._action("&Agent View", "Ctrl+3", lambda: self.pages.setCurrentIndex(2)),
            self._action("Agent &Log", "Ctrl+4", lambda: self.pages.setCurrentWidget(self.log)),
            self._action("&Checks", "Ctrl+5", lambda: self.pages.setCurrentWidget(self.checks)),
            self._action("&Duplicates", "Ctrl+6", lambda: self.pages.setCurrentWidget(self.duplicates)),
            self._action("&History", "Ctrl+7", lambda: self.pages.setCurrentWidget(self.history)),
            self._action("&Map", "Ctrl+8", lambda: self.pages.setCurrentWidget(self.map)),
            self._action("H&ealth", "Ctrl+9", lambda: self.pages.setCurrentWidget(self.health)),
            self._action("&Reach", "Ctrl+0", lambda: self.pages.setCurrentWidget(self.reach)),
        ]
        self._build_database_actions()
        about = self._action("&About recall-gui", None, lambda: show_about(self, self.location))
        shortcuts = self._action("&Keyboard Shortcuts", "F1", lambda: show_shortcuts(self))

        menus = self.menuBar()
        file_menu = menus.addMenu("&File")
        file_menu.addActions([self.open_folder_action, self.open_uri_action])
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.add_to_agents_action)
        file_menu.addSeparator()
        file_menu.addActions([self.export_csv_action, self.export_json_action])
        file_menu.addSeparator()
        file_menu.addActions([self.reload_action, self.demo_action])
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        menus.addMenu("&Edit").addAction(knowledge.results.copy_action)
        search_menu = menus.addMenu("&Search")
        search_menu.addActions([self.focus_query_action, self.search_action, self.cancel_action])
        search_menu.addAction(self.browse_action)
        search_menu.addSeparator()
        tools = knowledge.entry_tools
        search_menu.addActions([tools.more_like_action, tools.add_golden_action])
        self.addActions([tools.more_like_action, tools.add_golden_action])
        self.database_menu = menus.addMenu("&Database")
        self.database_menu.setObjectName("databaseMenu")
        self.database_menu.addActions(self.database_actions.actions)
        self.database_menu.aboutToShow.connect(self.database_actions.update)
        menus.addMenu("&View").addActions(self.page_actions)
        menus.addMenu("&Help").addActions([shortcuts, about])

    def _build_database_actions(self) -> None:
        """Activate, Deactivate, Unregister the database the knowledge page shows (its menu, and the
        dropdown's context menu)."""
        knowledge = self.knowledge
        self.database_actions = DatabaseActions(
            self.services,
            self._registered_current,
            self,
            lambda name: knowledge.choose_database(name, knowledge.read_inputs()),
        )
        self.registryReloaded.connect(self.database_actions.follow_registry)
        combo = self.knowledge.database_bar.combo
        combo.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        combo.customContextMenuRequested.connect(
            lambda point: self._database_menu_at(combo.mapToGlobal(point))
        )

    def _registered_current(self) -> str | None:
        current = self.knowledge.current
        return current.name if current is not None and current.origin == "registry" else None

    def _database_menu_at(self, where: QPoint) -> None:
        name = self._registered_current()
        if name is not None:
            self.database_actions.menu_for(name, self).exec(where)

    # --- opening folders ------------------------------------------------------------------------------

    def ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a LanceDB folder (read-only)", str(Path.home()))
        if path:
            self.open_folder(path)

    def open_folder(self, path: str) -> None:
        self.tasks.start(self.opened.open_place(path, inputs=self.knowledge.read_inputs()), key="open")

    def _on_picker_cancelled(self) -> None:
        if self.knowledge.current is None:  # started on a folder, then no table chosen: the usual one
            inputs = self.knowledge.read_inputs()
            self.tasks.start(self.knowledge.choose_database(self._initial_database(), inputs), key="choose")

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        places = self.opened.recent.places()
        for place in places:
            action = self.recent_menu.addAction(place.label)
            action.triggered.connect(
                lambda _checked=False, p=place: self.opened.open_recent(p, self.knowledge.read_inputs())
            )
        if not places:
            self.recent_menu.addAction("No folders opened yet").setEnabled(False)
            return
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear Recent", self.opened.recent.clear)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if folder_of(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        folder = folder_of(event.mimeData())
        if folder is None:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        self.open_folder(folder)

    def focus_query(self) -> None:
        self.pages.setCurrentWidget(self.knowledge)
        self.knowledge.focus_query()

    def _on_escape(self) -> None:
        if not (
            self.knowledge.cancel() or self.checks.cancel() or self.duplicates.cancel() or self.reach.cancel()
        ):
            self.banner.dismiss()

    # --- start-up -------------------------------------------------------------------------------------

    def begin(self) -> asyncio.Task[Any]:
        """Start the background start-up (see :meth:`start`); the window is usable meanwhile."""
        return self.tasks.start(self.start(), key="start")

    async def start(self) -> None:
        """Read the registry and load the heavy libraries (both on workers, at once), build the demo on a
        first start, check the databases, open one."""
        self.services.set_activity("Loading search libraries…")
        # The registry is read while the window is put on screen; the libraries wait for it to be there
        # (see _on_screen): both hold Python's lock much of the time, and the libraries more of it.
        reading = asyncio.ensure_future(self.read_registry())
        try:
            await self._on_screen()
            await asyncio.gather(reading, self.services.heavy.ready())
        finally:
            reading.cancel()
        self.services.set_activity("Ready")
        opening = self.open_at_start
        if opening is None and demo_wanted(self.location, self.registry) and await self.build_demo():
            self.started.emit()  # building it re-read the registry and opened the demo
            return
        await self.refresh_health()
        inputs = self.knowledge.read_inputs()
        if opening is None or not await self.opened.open_place(opening[0], opening[1], inputs=inputs):
            await self.knowledge.choose_database(self._initial_database(), inputs)
        self.started.emit()

    async def _on_screen(self, timeout_s: float = 1.0) -> None:
        """Until the window is on screen; at most ``timeout_s`` (a window kept hidden or minimised still
        gets its libraries).

        The libraries load on a worker thread, but importing is Python code that holds the interpreter's
        lock most of the time: started with the window, it held the window's first paint back
        (docs/PERFORMANCE_LOG.md#main_window-_on_screen). The user cannot search before they are loaded
        either way; they see the window sooner.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            if self.is_on_screen():
                return
            await asyncio.sleep(0.005)

    def is_on_screen(self) -> bool:
        """Shown and exposed: the window system has mapped it, so it paints and takes input."""
        handle = self.windowHandle()
        return self.isVisible() and handle is not None and handle.isExposed()

    def _initial_database(self) -> str | None:
        remembered = self.services.memory.text(WindowMemory.DATABASE)
        if remembered and self.registry.get(remembered):
            return remembered
        chosen = self.registry.active or self.registry.databases
        return chosen[0].name if chosen else None

    async def build_demo(self) -> bool:
        """Build the demo behind a cancellable progress dialog, then open it; ``False`` if not built."""
        if self._demo is not None:
            return False
        self._demo = DemoBuild(self, self.location.directory, self.services.chores)
        self.services.set_activity("Setting up the demo knowledge base…")
        self.knowledge.empty_hint("Setting up the demo knowledge base…")
        try:
            await self._demo.run()
        except (DemoBuildCancelled, RecallError, OSError) as error:  # DemoConflictError: what to do
            self.services.show_error(error)
            return False
        finally:
            self._demo = None
            self.services.set_activity("Ready")
        await self.reload_registry()
        self.show_message(
            UserMessage(
                "The demo knowledge base is ready: Python's help topics.",
                "Ask it something, e.g. “how do generators work”, and press Enter.",
                "info",
            )
        )
        return True

    # --- the registry ---------------------------------------------------------------------------------

    def _show_registry(self, generated: str | None = None) -> None:
        """Show the snapshot; ``generated``: its database list for the tool description, when it was
        made with the snapshot (on the worker)."""
        registry = self.registry
        self.services.drafts.follow(registry, generated)
        self.knowledge.set_registry(registry)
        self.description.set_registry(registry)
        wrong_folder = location_problem(self.location)
        if wrong_folder is not None:
            self.show_message(
                UserMessage(sentence(wrong_folder.message), wrong_folder.hint, "warning", "registry")
            )
        elif registry.problems:
            self.show_message(
                UserMessage(
                    registry_problems_text(registry.problems),
                    "The rest of it is used. Fix the file by hand and press F5; recall-gui never "
                    "overwrites a registry file it cannot read.",
                    "warning",
                    "registry",
                )
            )
        self.status_activity.setToolTip(f"Registry: {self.location.directory} ({self.location.source})")

    async def reload_registry(self, *, external: bool = False) -> None:
        """Read the registry again and re-check the databases; keeps the current choice and all edits."""
        await self.read_registry(external=external)
        await self.follow_registry()

    def reread_registry(self, *, external: bool = False) -> asyncio.Task[Any]:
        """Start reading the registry again (then re-checking the databases); see :meth:`read_registry`."""
        self._external_change = self._external_change or external
        return self.tasks.start(self.reload_registry(external=external), key=REGISTRY_READ)

    async def read_registry(self, *, external: bool = False) -> None:
        """Take a new snapshot of the registry on the core's worker (a large one takes long to read) and
        show it.

        While a read is under way, the watcher's news wait for it (:meth:`_check_registry`): a read started
        after the window's own write includes that write, so the write is never taken for another
        program's. A change another program made meanwhile is still seen: the snapshot is checked
        against the files once more when it is shown.
        """
        self._external_change = self._external_change or external
        directory = self.location.directory
        self._reads += 1
        try:
            previous = self.registry if self.registry.directory == directory else None
            registry, generated = await asyncio.get_running_loop().run_in_executor(
                self.services.chores, read_snapshot, directory, previous
            )
        finally:
            self._reads -= 1
        if directory != self.location.directory:  # pointed at another registry meanwhile: read that
            await self.read_registry()
            return
        external, self._external_change = self._external_change, False
        self._read_once = True
        self._adopt_registry(registry, generated, external=external)
        if registry.changed_on_disk():
            self.reread_registry(external=True)

    def _adopt_registry(self, registry: Registry, generated: str, *, external: bool) -> None:
        self.services.registry = registry
        self.watcher.rewatch()
        self._show_registry(generated)
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
        """After a new snapshot: re-check health, and choose another database if the current one is gone."""
        await self.refresh_health()
        if self.knowledge.current is None:
            await self.knowledge.choose_database(self._initial_database(), self.knowledge.read_inputs())

    async def refresh_health(self) -> None:
        """Check the databases (folder, table, model, dimension) and show the outcome in the dropdown: the
        first :data:`HEALTH_FIRST` of the list now, the rest in the background, a batch at a time (a
        large registry's take long, and the GUI thread serves the user between batches)."""
        session = await self.services.session()
        registry = self.registry
        listed = registry.active + registry.inactive
        await self._check_health(session, listed[:HEALTH_FIRST])
        if len(listed) > HEALTH_FIRST:
            self.tasks.start(self._check_rest(session, registry, listed[HEALTH_FIRST:]), key=HEALTH_REST)

    async def _check_rest(
        self, session: Session, registry: Registry, rest: tuple[DatabaseEntry, ...]
    ) -> None:
        for first in range(0, len(rest), HEALTH_BATCH):
            if self.registry is not registry:
                return  # a newer snapshot is checked on its own
            await self._check_health(session, rest[first : first + HEALTH_BATCH])

    async def _check_health(self, session: Session, entries: tuple[DatabaseEntry, ...]) -> None:
        healths = await asyncio.gather(*(core.search.check_health(session, entry) for entry in entries))
        self.knowledge.show_health({health.entry.name: health for health in healths})

    def _check_registry(self) -> None:
        if self._reads or not self._read_once:
            return  # the read under way is checked against the files when it is done
        if self.registry.changed_on_disk():
            self.reread_registry(external=True)

    def _on_reload(self) -> None:
        self.reread_registry()
        self.services.set_activity("Registry reloaded")

    def _on_registry_edited(self) -> None:
        self.reread_registry()

    def _on_build_demo(self) -> None:
        self.tasks.start(self.build_demo(), key="demo")

    # --- memory and closing ---------------------------------------------------------------------------

    def _restore(self) -> None:
        memory = self.services.memory
        geometry = memory.bytes(WindowMemory.GEOMETRY)
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        description = memory.bytes(WindowMemory.DESCRIPTION_SPLITTER)
        if description is not None:
            self.description.splitter.restoreState(description)
        self.knowledge.restore(memory)
        page = min(max(memory.integer(WindowMemory.PAGE, 0), 0), self.pages.count() - 1)
        self.pages.setCurrentIndex(page)

    def save_state(self) -> None:
        memory = self.services.memory
        memory.set(WindowMemory.GEOMETRY, self.saveGeometry())
        memory.set(WindowMemory.DESCRIPTION_SPLITTER, self.description.splitter.saveState())
        memory.set(WindowMemory.PAGE, self.pages.currentIndex())
        self.knowledge.save(memory)
        memory.sync()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            QTimer.singleShot(0, self._check_registry)  # back from an editor: did it change the registry?

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self._demo is not None:
            self._demo.cancel()
        self.tasks.cancel_all()
        self.agent.shutdown()
        super().closeEvent(event)

    async def aclose(self) -> None:
        """Stop the MCP server and release the embedders (HTTP clients) once the window is closed."""
        await self.agent.aclose()
        await self.services.aclose()
