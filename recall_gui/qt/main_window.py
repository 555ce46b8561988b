"""The main window: the message banner, the pages, the status bar — and what spans pages, done by the
parts in ``qt/window/``: start-up, the registry (reading, watching, checking health) and the menus.

Pages are tabs of :attr:`MainWindow.pages` that receive :class:`~recall_gui.qt.services.WindowServices`,
not the window; a new page is one more tab. ``recall-gui`` shows the window first as its frame
(``qt/window/first_frame.py``) and completes it once it is on screen (:meth:`MainWindow.complete`), which
imports and builds the knowledge page; the others are built when first shown or asked for, and by the
start-up once the window is on screen (docs/PERFORMANCE_LOG.md#start-up). This module imports only what
the frame needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QSizePolicy, QVBoxLayout, QWidget

from recall_gui.core.base import SettingsStore
from recall_gui.qt.icons import app_icon
from recall_gui.qt.settings import WindowMemory, open_settings
from recall_gui.qt.window.first_frame import FirstFrame, is_on_screen, keep_typing

if TYPE_CHECKING:
    import asyncio

    from recall_gui.core.base import RegistryLocation
    from recall_gui.core.messages import UserMessage
    from recall_gui.core.registry import Registry
    from recall_gui.qt.operations import Operations
    from recall_gui.qt.pages.agent.page import AgentPage
    from recall_gui.qt.pages.checks.page import ChecksPage
    from recall_gui.qt.pages.description.page import DescriptionPage
    from recall_gui.qt.pages.duplicates.page import DuplicatesPage
    from recall_gui.qt.pages.health.page import HealthPage
    from recall_gui.qt.pages.history.page import HistoryPage
    from recall_gui.qt.pages.log.page import LogPage
    from recall_gui.qt.pages.map.page import MapPage
    from recall_gui.qt.pages.reach.page import ReachPage
    from recall_gui.qt.pages.review.page import ReviewPage
    from recall_gui.qt.window.start_up import OpenRequest


class _Following(Protocol):
    def follow_registry(self) -> None: ...


class _Cancelling(Protocol):
    def cancel(self) -> bool: ...


FollowingPage = TypeVar("FollowingPage", bound=_Following)


#: What each page focuses when it is opened, by object name, in the pages' order: its main action (Enter
#: runs a focused button) or where the keyboard starts.
MAIN_WIDGETS = (
    "queryEdit",
    "activeTable",
    "agentRunButton",
    "logCallsTable",
    "checksRunButton",
    "duplicatesFindButton",
    "versionsTable",
    "colourCombo",
    "healthCheckButton",
    "reachRunButton",
    "reviewPage",  # the verdict keys go to the page itself
)


class MainWindow(QMainWindow):
    """Search and browse a knowledge base, check entries, and edit what the agent reads."""

    #: The registry was read again (F5, an edit, or another program's change).
    registryReloaded = Signal()
    #: Start-up finished: libraries loaded, health checked, a database chosen.
    started = Signal()
    #: The window's content until :meth:`complete` replaces it (Qt reports changes from the constructor on).
    _frame: FirstFrame | None = None
    _completed = False

    def __init__(
        self,
        location: RegistryLocation,
        config_dir: Path,
        open_at_start: OpenRequest | None = None,
        *,
        complete: bool = True,
    ) -> None:
        """The window for the registry at ``location``; with ``complete=False`` its frame only, at its
        remembered size, until :meth:`complete` builds the rest."""
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("recall-gui")
        self.setWindowIcon(app_icon())
        self.config_dir = config_dir
        self._at_start = (location, open_at_start)
        settings, self._settings_problem = open_settings(config_dir)
        self._memory = WindowMemory(settings)
        geometry = self._memory.bytes(WindowMemory.GEOMETRY)
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        self._frame = FirstFrame()
        self.setCentralWidget(self._frame)
        if complete:
            self.complete()

    @property
    def completed(self) -> bool:
        """Its pages are built (:meth:`complete`)."""
        return self._completed

    def complete(self) -> None:
        """Build the banner, the knowledge page (the others are built when first shown), the menus and the
        status bar into the frame; what was typed into the frame's query box is kept. Once only."""
        frame = self._frame
        if frame is None:
            return
        # Imported here, after the frame is on screen: they are most of what the window's start costs.
        from recall_gui.qt.actions.databases import DatabaseActions
        from recall_gui.qt.pages.knowledge.page import KnowledgePage
        from recall_gui.qt.panels.banner import MessageBanner
        from recall_gui.qt.registry_watcher import RegistryWatcher
        from recall_gui.qt.services import WindowServices
        from recall_gui.qt.shortcuts import ShortcutsFirst
        from recall_gui.qt.widgets import ElidedLabel, PageTabs
        from recall_gui.qt.window.menus import WindowCommands, WindowMenus
        from recall_gui.qt.window.registry_reading import RegistryReading
        from recall_gui.qt.window.start_up import StartUp

        typed = frame.typed()
        location, open_at_start = self._at_start
        self.banner = MessageBanner()
        # Cut to what fits, so that a long account of the last action leaves the search's figures room.
        self.status_activity = ElidedLabel("Starting…")
        self.status_activity.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status_activity.setObjectName("statusActivity")
        self.services = services = WindowServices.of_window(
            location, self.config_dir, self._memory, self.banner, self.status_activity
        )
        # Children of the window, so they go with it: a Python slot on their signals holds the window, a
        # circle through Qt that Python's collector cannot see.
        services.navigation.setParent(self)
        services.golden.setParent(self)
        self.knowledge = KnowledgePage(services)
        self.opened = self.knowledge.opened
        self.setAcceptDrops(True)
        self.watcher = RegistryWatcher(location.directory, self)
        self.pages = PageTabs()
        self.reading = RegistryReading(
            services,
            knowledge=self.knowledge,
            description=lambda: cast("DescriptionPage | None", self.pages.built("descriptionPage")),
            watcher=self.watcher,
            status=self.status_activity,
            reloaded=self.registryReloaded,
        )
        self.start_up = StartUp(
            services,
            self,
            self.reading,
            knowledge=self.knowledge,
            opened=self.opened,
            open_at_start=open_at_start,
            started=self.started,
            pages=self.pages,
        )
        self._frame = None
        self._lay_out()  # the frame goes with the central widget it was
        knowledge = self.knowledge
        #: Activate, Deactivate, Unregister the database the knowledge page shows (its menu, and the
        #: dropdown's context menu).
        self.database_actions = DatabaseActions(
            services,
            self._registered_current,
            self,
            lambda name: knowledge.choose_database(name, knowledge.read_inputs()),
        )
        self.menus = WindowMenus(
            self,
            location,
            knowledge=knowledge,
            opened=self.opened,
            pages=self.pages,
            database_actions=self.database_actions,
            commands=WindowCommands(
                ask_folder=self.ask_folder,
                reload=self._on_reload,
                build_demo=self.start_up.request_demo,
                focus_query=self.focus_query,
                focus_results=self.focus_results,
                escape=self._on_escape,
            ),
        )
        self.shortcuts_first = ShortcutsFirst(self)
        self._connect()
        if self._settings_problem is not None:
            services.show_warning(self._settings_problem)
        self.reading.show_registry()
        self._restore()
        self.services.show_page(self.pages.currentWidget())
        self._completed = True
        if typed.text or typed.focused:
            self.pages.setCurrentWidget(self.knowledge)
            keep_typing(self.knowledge.query_bar.query_edit, typed)

    def _on_page_changed(self, index: int) -> None:
        page = self.pages.page(index)
        self.services.show_page(page)
        self._focus_main(page)
        if index != self.pages.index_named("descriptionPage"):
            self.services.dismiss("description")  # "Suffix saved" belongs to the page it was saved on

    def _focus_main(self, page: QWidget | None) -> None:
        """Give the keyboard to ``page``'s main action (else to its first control), visibly."""
        if page is None or not self.isVisible():
            return
        name = MAIN_WIDGETS[self.pages.indexOf(page)]
        widget = page if page.objectName() == name else page.findChild(QWidget, name)
        if widget is not None and widget.isEnabled() and widget.isVisibleTo(page):
            widget.setFocus(Qt.FocusReason.TabFocusReason)  # drawn with its focus frame
        elif not page.isAncestorOf(QApplication.focusWidget() or self):
            page.setFocus(Qt.FocusReason.TabFocusReason)
            page.focusNextChild()

    def _lay_out(self) -> None:
        """The banner above the pages (one tab each), the status bar below."""
        self.pages.setObjectName("pages")
        self.pages.setDocumentMode(True)
        self.pages.addTab(self.knowledge, "Knowledge base")
        for name, title, build in (
            ("descriptionPage", "Agent's tool description", self._build_description),
            ("agentPage", "Agent view", self._build_agent),
            ("logPage", "Agent log", self._build_log),
            ("checksPage", "Checks", self._build_checks),
            ("duplicatesPage", "Duplicates", self._build_duplicates),
            ("historyPage", "History", self._build_history),
            ("mapPage", "Map", self._build_map),
            ("healthPage", "Health", self._build_health),
            ("reachPage", "Reach", self._build_reach),
            ("reviewPage", "Review", self._build_review),
        ):
            self.pages.add_later(name, title, build)
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
        """What spans pages: registry edits, the registry's changes, and requests to open an entry (each
        page built later is connected by its builder below)."""
        self.services.reload_registry = self.reload_registry
        self.opened.pickerCancelled.connect(self._on_picker_cancelled)
        self.watcher.touched.connect(self.reading.check_registry)
        self.registryReloaded.connect(self.database_actions.follow_registry)
        self.services.navigation.entryRequested.connect(
            lambda *_: self.pages.setCurrentWidget(self.knowledge)
        )
        self.services.navigation.reviewRequested.connect(self._on_review_requested)

    # --- the pages after the knowledge page: built when first shown or asked for --------------------

    def _build_description(self) -> DescriptionPage:
        from recall_gui.qt.pages.description.page import DescriptionPage

        page = DescriptionPage(self.services)
        page.set_registry(self.registry)
        splitter = self.services.memory.bytes(WindowMemory.DESCRIPTION_SPLITTER)
        if splitter is not None:
            page.splitter.restoreState(splitter)
        page.registryEdited.connect(self._on_registry_edited)
        self.registryReloaded.connect(page.follow_registry)  # its list's own actions
        return page

    def _build_agent(self) -> AgentPage:
        from recall_gui.qt.pages.agent.page import AgentPage

        return self._following(AgentPage(self.services))

    def _build_log(self) -> LogPage:
        from recall_gui.qt.pages.log.page import LogPage

        return self._following(LogPage(self.services, SettingsStore(self.config_dir)))

    def _build_checks(self) -> ChecksPage:
        from recall_gui.qt.pages.checks.page import ChecksPage

        return self._following(ChecksPage(self.services))

    def _build_duplicates(self) -> DuplicatesPage:
        from recall_gui.qt.pages.duplicates.page import DuplicatesPage

        return self._following(DuplicatesPage(self.services))

    def _build_history(self) -> HistoryPage:
        from recall_gui.qt.pages.history.page import HistoryPage

        page = self._following(HistoryPage(self.services, self.knowledge))
        page.showKnowledge.connect(lambda: self.pages.setCurrentWidget(self.knowledge))
        return page

    def _build_map(self) -> MapPage:
        from recall_gui.qt.pages.map.page import MapPage

        page = MapPage(self.services, self.knowledge)
        page.showKnowledge.connect(lambda: self.pages.setCurrentWidget(self.knowledge))
        return page

    def _build_health(self) -> HealthPage:
        from recall_gui.qt.pages.health.page import HealthPage

        return self._following(HealthPage(self.services))

    def _build_reach(self) -> ReachPage:
        from recall_gui.qt.pages.reach.page import ReachPage

        return self._following(ReachPage(self.services))

    def _build_review(self) -> ReviewPage:
        from recall_gui.qt.pages.review.page import ReviewPage

        return self._following(ReviewPage(self.services))

    def _on_review_requested(self, entry: object, row_id: int, sha: str) -> None:
        """Show the Review page at the entry asked for; a page built by this request missed the request
        (it connects when built), so it is handed it here."""
        built = self.pages.built("reviewPage") is not None
        page = self.review
        if not built:
            page.review_from(entry, row_id, sha)
        self.pages.setCurrentWidget(page)

    def _following(self, page: FollowingPage) -> FollowingPage:
        """``page``, following the registry from now on, as it would had it been built with the window."""
        page.follow_registry()
        self.registryReloaded.connect(page.follow_registry)
        return page

    @property
    def description(self) -> DescriptionPage:
        return cast("DescriptionPage", self.pages.named("descriptionPage"))

    @property
    def agent(self) -> AgentPage:
        return cast("AgentPage", self.pages.named("agentPage"))

    @property
    def log(self) -> LogPage:
        return cast("LogPage", self.pages.named("logPage"))

    @property
    def checks(self) -> ChecksPage:
        return cast("ChecksPage", self.pages.named("checksPage"))

    @property
    def duplicates(self) -> DuplicatesPage:
        return cast("DuplicatesPage", self.pages.named("duplicatesPage"))

    @property
    def history(self) -> HistoryPage:
        return cast("HistoryPage", self.pages.named("historyPage"))

    @property
    def map(self) -> MapPage:
        return cast("MapPage", self.pages.named("mapPage"))

    @property
    def health(self) -> HealthPage:
        return cast("HealthPage", self.pages.named("healthPage"))

    @property
    def reach(self) -> ReachPage:
        return cast("ReachPage", self.pages.named("reachPage"))

    @property
    def review(self) -> ReviewPage:
        return cast("ReviewPage", self.pages.named("reviewPage"))

    @property
    def location(self) -> RegistryLocation:
        return self.services.location

    @property
    def registry(self) -> Registry:
        return self.services.registry

    @property
    def operations(self) -> Operations:
        return self.services.operations

    def show_message(self, message: UserMessage) -> None:
        self.services.show_message(message)

    def _registered_current(self) -> str | None:
        current = self.knowledge.current
        return current.name if current is not None and current.origin == "registry" else None

    # --- opening folders ------------------------------------------------------------------------------

    def ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a LanceDB folder (read-only)", str(Path.home()))
        if path:
            self.open_folder(path)

    def open_folder(self, path: str) -> None:
        self.opened.request_place(path, self.knowledge.read_inputs())

    def _on_picker_cancelled(self) -> None:
        if self.knowledge.current is None:  # started on a folder, then no table chosen: the usual one
            self.knowledge.request_database(self.reading.initial_database())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        from recall_gui.qt.actions.opened_tables import folder_of

        if folder_of(event.mimeData()) is not None:
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        from recall_gui.qt.actions.opened_tables import folder_of

        folder = folder_of(event.mimeData())
        if folder is None:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        self.open_folder(folder)

    def focus_query(self) -> None:
        if self._frame is not None:
            self._frame.query_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return
        self.pages.setCurrentWidget(self.knowledge)
        self.knowledge.focus_query()

    def focus_results(self) -> None:
        self.pages.setCurrentWidget(self.knowledge)
        self.knowledge.results.focus_rows()

    def _on_escape(self) -> None:
        running = ("checksPage", "duplicatesPage", "healthPage", "reachPage")
        built = [self.pages.built(name) for name in running]
        cancels = [self.knowledge, *(cast(_Cancelling, page) for page in built if page is not None)]
        if not any(page.cancel() for page in cancels):
            self.banner.dismiss()

    # --- start-up and the registry (``qt/window/``) ---------------------------------------------------

    def begin(self) -> asyncio.Task[Any]:
        """Start up in the background (``qt/window/start_up.py``); the window is usable meanwhile."""
        return self.start_up.begin()

    async def start(self) -> None:
        await self.start_up.run()

    def is_on_screen(self) -> bool:
        """Shown and exposed: the window system has mapped it, so it paints and takes input."""
        return is_on_screen(self)

    async def build_demo(self) -> bool:
        return await self.start_up.build_demo()

    async def read_registry(self, *, external: bool = False) -> None:
        await self.reading.read_registry(external=external)

    async def reload_registry(self, *, external: bool = False) -> None:
        await self.reading.reload_registry(external=external)

    def reread_registry(self, *, external: bool = False) -> asyncio.Task[Any]:
        return self.reading.reread_registry(external=external)

    def _on_reload(self) -> None:
        self.reread_registry()
        self.services.set_activity("Registry reloaded")

    def _on_registry_edited(self) -> None:
        self.reread_registry()

    # --- memory and closing ---------------------------------------------------------------------------

    def _restore(self) -> None:
        """What the pages remember (the frame took the window's size)."""
        memory = self.services.memory
        self.knowledge.remembering.restore(memory)
        page = min(max(memory.integer(WindowMemory.PAGE, 0), 0), self.pages.count() - 1)
        self.pages.setCurrentIndex(page)

    def save_state(self) -> None:
        memory = self.services.memory
        memory.set(WindowMemory.GEOMETRY, self.saveGeometry())
        if self.pages.built("descriptionPage") is not None:  # else its splitter stays as remembered
            memory.set(WindowMemory.DESCRIPTION_SPLITTER, self.description.splitter.saveState())
        memory.set(WindowMemory.PAGE, self.pages.currentIndex())
        self.knowledge.remembering.save(memory)
        memory.sync()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if not self.completed:
            return
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            # Back from an editor: did it change the registry?
            QTimer.singleShot(0, self.reading.check_registry)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.completed:  # closed as it came up: nothing was changed to keep
            super().closeEvent(event)
            return
        self.save_state()
        self.start_up.cancel_demo()
        self.operations.cancel_all()
        if self.pages.built("agentPage") is not None:
            self.agent.shutdown()
        super().closeEvent(event)

    async def aclose(self) -> None:
        """Stop the MCP server and release the embedders (HTTP clients) once the window is closed."""
        if self.pages.built("agentPage") is not None:
            await self.agent.aclose()
        await self.services.aclose()
