"""The window's registry: one snapshot, read on a worker, shown on the pages, read again after F5, an edit
or another program's change, and the databases' health checked after each reading."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel

from recall_gui import core
from recall_gui.core.messages import UserMessage, registry_problems_text, sentence
from recall_gui.core.registry import (
    DatabaseEntry,
    Registry,
    build_tool_suffix,
    load_registry,
    location_problem,
)
from recall_gui.qt.pages.description.page import DescriptionPage
from recall_gui.qt.pages.knowledge.page import KnowledgePage
from recall_gui.qt.registry_watcher import RegistryWatcher
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    from recall_gui.core.session import Session

#: The lane of reading the registry again (and re-checking the databases after it).
REGISTRY_READ = "reload"
#: The lane of checking the health of the databases past the first :data:`HEALTH_FIRST`.
HEALTH_REST = "health-rest"
#: Databases checked before start-up (or a reload) goes on; the rest in batches of :data:`HEALTH_BATCH`.
HEALTH_FIRST = 200
HEALTH_BATCH = 50


def read_snapshot(directory: Path, previous: Registry | None = None) -> tuple[Registry, str]:
    """The registry in ``directory`` with its derived lists, and its database list for the tool
    description: run on a worker, so a large registry never holds the GUI thread. ``previous``: the
    snapshot shown now, whose unchanged entries are reused."""
    registry = load_registry(directory, previous).warmed()
    return registry, build_tool_suffix(registry)


class RegistryReading:
    """Makes and shows the window's snapshot (``services.registry``), and checks the databases in it."""

    def __init__(
        self,
        services: WindowServices,
        *,
        knowledge: KnowledgePage,
        description: DescriptionPage,
        watcher: RegistryWatcher,
        status: QLabel,
        reloaded: SignalInstance,
    ) -> None:
        self.services = services
        self.knowledge = knowledge
        self.description = description
        self.watcher = watcher
        #: The status bar's account of the last action; its tooltip names the registry.
        self.status = status
        self._reloaded = reloaded
        self.rereading = services.operations.lane(REGISTRY_READ)
        self.checking_rest = services.operations.lane(HEALTH_REST)
        #: One database's check of a batch checked side by side, awaited by the batch.
        self.checking_one = services.operations.lane(awaited=True)
        #: Whether a read under way (or superseded by one) was started by another program's change.
        self._external_change = False
        #: Registry reads under way on the worker.
        self.reads_under_way = 0
        #: Whether the registry has been read yet (start-up reads it): until then the watcher's news wait.
        self._read_once = False

    @property
    def registry(self) -> Registry:
        return self.services.registry

    def initial_database(self) -> str | None:
        """The database to open: the one remembered, else the first active one, else the first."""
        remembered = self.services.memory.text(WindowMemory.DATABASE)
        if remembered and self.registry.get(remembered):
            return remembered
        chosen = self.registry.active or self.registry.databases
        return chosen[0].name if chosen else None

    def show_registry(self, generated: str | None = None) -> None:
        """Show the snapshot; ``generated``: its database list for the tool description, when it was
        made with the snapshot (on the worker)."""
        registry, services = self.registry, self.services
        location = services.location
        services.drafts.follow(registry, generated)
        self.knowledge.set_registry(registry)
        self.description.set_registry(registry)
        wrong_folder = location_problem(location)
        if wrong_folder is not None:
            services.show_message(
                UserMessage(sentence(wrong_folder.message), wrong_folder.hint, "warning", "registry")
            )
        elif registry.problems:
            services.show_message(
                UserMessage(
                    registry_problems_text(registry.problems),
                    "The rest of it is used. Fix the file by hand and press F5; recall-gui never "
                    "overwrites a registry file it cannot read.",
                    "warning",
                    "registry",
                )
            )
        self.status.setToolTip(f"Registry: {location.directory} ({location.source})")

    async def reload_registry(self, *, external: bool = False) -> None:
        """Read the registry again and re-check the databases; keeps the current choice and all edits."""
        await self.read_registry(external=external)
        await self.follow_registry()

    def reread_registry(self, *, external: bool = False) -> asyncio.Task[Any]:
        """Start reading the registry again (then re-checking the databases); see :meth:`read_registry`."""
        self._external_change = self._external_change or external
        return self.rereading.start(self.reload_registry(external=external))

    async def read_registry(self, *, external: bool = False) -> None:
        """Take a new snapshot of the registry on a worker (a large one takes long to read) and show it."""
        await self.begin_read(external=external)

    def begin_read(self, *, external: bool = False) -> Coroutine[Any, Any, None]:
        """Hand the reading of a new snapshot to a worker now; the coroutine returned shows it once read.

        While a read is under way, the watcher's news wait for it (:meth:`check_registry`): a read started
        after the window's own write includes that write, so the write is never taken for another
        program's. A change another program made meanwhile is still seen: the snapshot is checked
        against the files once more when it is shown.
        """
        self._external_change = self._external_change or external
        directory = self.services.location.directory
        previous = self.registry if self.registry.directory == directory else None
        self.reads_under_way += 1
        job = asyncio.get_running_loop().run_in_executor(
            self.services.chores, read_snapshot, directory, previous
        )
        job.add_done_callback(self._read_ended)
        return self._show_read(directory, job)

    def _read_ended(self, job: asyncio.Future[tuple[Registry, str]]) -> None:
        self.reads_under_way -= 1
        if not job.cancelled():
            job.exception()  # seen here too: a start-up cancelled meanwhile no longer awaits it

    async def _show_read(self, directory: Path, job: Awaitable[tuple[Registry, str]]) -> None:
        registry, generated = await job
        if directory != self.services.location.directory:  # pointed at another registry meanwhile
            await self.read_registry()
            return
        external, self._external_change = self._external_change, False
        self._read_once = True
        self._adopt(registry, generated, external=external)
        if registry.changed_on_disk():
            self.reread_registry(external=True)

    def _adopt(self, registry: Registry, generated: str, *, external: bool) -> None:
        self.services.registry = registry
        self.watcher.rewatch()
        self.show_registry(generated)
        if external and not registry.problems:
            self.services.show_message(
                UserMessage(
                    "The registry was changed by another program and has been reloaded.",
                    "Anything you had typed or not yet saved is still here.",
                    "info",
                    "registry",
                )
            )
        self._reloaded.emit()

    async def follow_registry(self) -> None:
        """After a new snapshot: re-check health, and choose another database if the current one is gone."""
        await self.refresh_health()
        knowledge = self.knowledge
        if knowledge.current is None:
            await knowledge.choose_database(self.initial_database(), knowledge.read_inputs())

    async def refresh_health(self) -> None:
        """Check the databases (folder, table, model, dimension) and show the outcome in the dropdown: the
        first :data:`HEALTH_FIRST` of the list now, the rest in the background, a batch at a time (a
        large registry's take long, and the GUI thread serves the user between batches)."""
        session = await self.services.session()
        registry = self.registry
        listed = registry.active + registry.inactive
        await self._check_health(session, listed[:HEALTH_FIRST])
        if len(listed) > HEALTH_FIRST:
            self.checking_rest.start(self._check_rest(session, registry, listed[HEALTH_FIRST:]))

    async def _check_rest(
        self, session: Session, registry: Registry, rest: tuple[DatabaseEntry, ...]
    ) -> None:
        for first in range(0, len(rest), HEALTH_BATCH):
            if self.registry is not registry:
                return  # a newer snapshot is checked on its own
            await self._check_health(session, rest[first : first + HEALTH_BATCH])

    async def _check_health(self, session: Session, entries: tuple[DatabaseEntry, ...]) -> None:
        checks = [self.checking_one.start(core.search.check_health(session, entry)) for entry in entries]
        try:
            healths = [await check for check in checks]
        except BaseException:  # cancelled, or one failed: the others stop with the batch
            for check in checks:
                check.cancel()
            raise
        self.knowledge.show_health({health.entry.name: health for health in healths})

    def check_registry(self) -> None:
        """The watcher saw a change, or the window was activated: read the registry again if its files
        changed (a read under way is checked against the files when it is done)."""
        if self.reads_under_way or not self._read_once:
            return
        if self.registry.changed_on_disk():
            self.reread_registry(external=True)
