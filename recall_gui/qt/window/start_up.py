"""The window's start-up, in its order: each step awaits what it needs, and nothing else holds the order.

1. The registry is read on a worker, at once: the database list fills while the window comes up.
2. The heavy libraries (LanceDB, PyArrow, fastembed…) load on a worker once the window is on screen (at
   most :data:`ON_SCREEN_S` later), while the registry may still be read. Importing is Python code that
   holds the interpreter's lock most of the time: started with the window, it held the window's first
   paint back (docs/PERFORMANCE_LOG.md#main_window-_on_screen); the user cannot search before they are in
   either way. Meanwhile the pages not built before the first paint are built, one a turn of the event
   loop, so that a key typed is served between two.
3. Once both are in: on a first start with the app's own empty registry, the demo is built; else the
   databases' health is checked and a database (or the folder asked for) is opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QWidget

from recall_gui.core.base import DemoBuildCancelled, RecallError
from recall_gui.core.demo import DEMO_NAME, demo_wanted
from recall_gui.core.messages import UserMessage
from recall_gui.qt.actions.opened_tables import OpenedTables
from recall_gui.qt.dialogs.demo_build import DemoBuild
from recall_gui.qt.pages.knowledge.page import KnowledgePage
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PageTabs
from recall_gui.qt.window.first_frame import is_on_screen
from recall_gui.qt.window.registry_reading import RegistryReading

#: At most this long the libraries wait for the window to be on screen (a window kept hidden or
#: minimised still gets them).
ON_SCREEN_S = 1.0
#: How long the window has to itself once on screen before the other pages are built behind it.
SETTLE_S = 0.05
#: A folder or URI to open at start, with its storage options (``recall-gui PATH``).
OpenRequest = tuple[str, Mapping[str, str]]


class StartUp:
    """Runs the start-up of ``window`` (see the module's description) and builds the demo."""

    def __init__(
        self,
        services: WindowServices,
        window: QWidget,
        reading: RegistryReading,
        *,
        knowledge: KnowledgePage,
        opened: OpenedTables,
        open_at_start: OpenRequest | None,
        started: SignalInstance,
        pages: PageTabs,
    ) -> None:
        self.services = services
        self.window = window
        self.reading = reading
        self.knowledge = knowledge
        self.opened = opened
        #: A folder or URI (and its storage options) to open instead of the remembered database.
        self.open_at_start = open_at_start
        self._started = started
        self.pages = pages
        operations = services.operations
        self.starting, self.building_demo = operations.lane("start"), operations.lane("demo")
        #: The first reading of the registry, which the start awaits.
        self.first_reading = operations.lane(awaited=True)
        #: The demo being built, while its dialog is shown.
        self.demo: DemoBuild | None = None
        services.drafts.search_changed.add(self._on_search_changed)

    def _on_search_changed(self) -> None:
        """The knowledge page went to another database than the demo: its welcome no longer applies."""
        entry = self.services.drafts.search.database
        if entry is not None and (entry.origin != "registry" or entry.name != DEMO_NAME):
            self.services.dismiss("demo")

    def begin(self) -> asyncio.Task[Any]:
        """Start :meth:`run` in the background; the window is usable meanwhile."""
        return self.starting.start(self.run())

    async def run(self) -> None:
        """Read the registry and load the libraries (steps 1 and 2), then open a database (step 3)."""
        self.services.set_activity("Loading search libraries…")
        reading = self.first_reading.start(self.reading.begin_read())  # 1: on a worker from now on
        try:
            await self.on_screen()
            self.services.heavy.start()  # 2: after the window is on screen, beside the registry
            await self.build_pages()
            await self.services.heavy.ready()
            await reading  # 3 needs both
        finally:
            reading.cancel()
        self.services.set_activity("Ready")
        await self.open_first()
        self._started.emit()

    async def on_screen(self, timeout_s: float = ON_SCREEN_S) -> None:
        """Until the window is on screen; at most ``timeout_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            if is_on_screen(self.window):
                return
            await asyncio.sleep(0.005)

    async def build_pages(self) -> None:
        """Build the pages not built yet, one a turn of the event loop, once the window has had
        :data:`SETTLE_S` to paint and take its first keys."""
        await asyncio.sleep(SETTLE_S)
        for name in self.pages.pending():
            await asyncio.sleep(0)
            self.pages.named(name)

    async def open_first(self) -> None:
        """The demo on a first start; else check the databases and open the one asked for, remembered,
        or first listed."""
        services, opening = self.services, self.open_at_start
        if opening is None and demo_wanted(services.location, services.registry) and await self.build_demo():
            return  # building it re-read the registry and opened the demo
        await self.reading.refresh_health()
        inputs = self.knowledge.read_inputs()
        if opening is None or not await self.opened.open_place(opening[0], opening[1], inputs=inputs):
            await self.knowledge.choose_database(self.reading.initial_database(), inputs)

    # --- the demo ---------------------------------------------------------------------------------------

    def request_demo(self) -> None:
        self.building_demo.start(self.build_demo())

    async def build_demo(self) -> bool:
        """Build the demo behind a cancellable progress dialog, then open it; ``False`` if not built."""
        if self.demo is not None:
            return False
        services = self.services
        self.demo = DemoBuild(self.window, services.location.directory, services.chores)
        services.set_activity("Setting up the demo knowledge base…")
        self.knowledge.results.show_result(None, "", "Setting up the demo knowledge base…")
        try:
            await self.demo.run()
        except (DemoBuildCancelled, RecallError, OSError) as error:  # DemoConflictError: what to do
            services.show_error(error)
            return False
        finally:
            self.demo = None
            services.set_activity("Ready")
        await self.reading.reload_registry()
        services.show_message(
            UserMessage(
                "The demo knowledge base is ready: Python's help topics.",
                "Ask it something, e.g. “how do generators work”, and press Enter.",
                "info",
                "demo",
            )
        )
        return True

    def cancel_demo(self) -> None:
        if self.demo is not None:
            self.demo.cancel()
