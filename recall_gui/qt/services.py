"""What every page of the window shares, handed to each page instead of the window itself.

A page (the knowledge base, the tool description, the agent view) gets the registry snapshot, the
background operations, the heavy libraries, one session and harness, the remembered settings and the message
banner from here, so it can be built, tested and added to the window without knowing the window.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QWidget

from recall_gui import core
from recall_gui.core.base import HeavyModules, RegistryLocation
from recall_gui.core.drafts import Drafts
from recall_gui.core.messages import Topic, UserMessage, user_message
from recall_gui.core.registry import Registry, SuffixStore
from recall_gui.qt.golden_checks import GoldenChecks
from recall_gui.qt.operations import Operations
from recall_gui.qt.panels.banner import MessageBanner
from recall_gui.qt.review_book import ReviewBook
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo
    from recall_gui.core.inspect import DuplicateReport
    from recall_gui.core.reach import ReachReport
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.search import Harness
    from recall_gui.core.session import Session


class Navigation(QObject):
    """Requests from one page to show something on another, so no page reaches into another's widgets."""

    #: Show entry ``entry_id`` (second) of database ``db_name`` (first) on the knowledge-base page.
    entryRequested = Signal(str, str)

    #: Review ``entry`` (a DatabaseEntry, first) from the row with LanceDB row id ``row_id`` (second; -1:
    #: none) whose content has the sha256 ``sha`` (third), on the Review page.
    reviewRequested = Signal(object, int, str)

    def open_entry(self, db_name: str, entry_id: str) -> None:
        self.entryRequested.emit(db_name, entry_id)

    def review_entry(self, entry: DatabaseEntry, row_id: int | None, sha: str) -> None:
        self.reviewRequested.emit(entry, -1 if row_id is None else row_id, sha)


@dataclass
class LastReports:
    """The last reach and duplicates reports made in this window, by database: the Review page walks
    their entries (it never makes a reach report behind the user's back)."""

    reach: dict[str, ReachReport] = field(default_factory=dict)
    duplicates: dict[str, DuplicateReport] = field(default_factory=dict)


class WindowServices:
    """The shared state and helpers of one window."""

    def __init__(
        self,
        location: RegistryLocation,
        registry: Registry,
        memory: WindowMemory,
        banner: MessageBanner,
        activity: QLabel,
        *,
        drafts: Drafts,
    ) -> None:
        self.location = location
        #: The registry snapshot every page shows; replaced (never mutated) when it is read again.
        self.registry = registry
        self.memory = memory
        self.banner = banner
        self.activity = activity
        #: What the user is editing or searching now: pages publish to it and read it, never each other.
        self.drafts = drafts
        #: The window's one way to run work in the background (``qt/operations.py``).
        self.operations = Operations(self.show_error)
        #: Plain worker threads for the window's blocking chores (imports, reading the registry, building
        #: the demo): Python threads, not qasync's QThreads, so closing a loop never leaves a running
        #: QThread behind. Two, so a registry read never waits for a long chore.
        self.chores = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-gui-bg")
        self.heavy = HeavyModules(self.chores)
        self.navigation = Navigation()
        #: Reads the registry again and shows it (the window sets it): a page that has just written the
        #: registry awaits it before it shows what it wrote.
        self.reload_registry: Callable[[], Awaitable[None]] = _nothing_to_reload
        #: The golden file the pages share (the Checks page runs it, the knowledge page adds to it).
        self.golden = GoldenChecks()
        #: The reviews of entries open in this window (the Review page marks, other pages show verdicts).
        self.reviews = ReviewBook(self.session)
        self.last_reports = LastReports()
        self._session: Session | None = None
        self._harness: Harness | None = None
        #: The stand-in models the banner has spoken of in this window (it offers the exact one once).
        self.stand_ins_told: set[str] = set()
        #: The status bar's last account of the window (:meth:`set_activity`) and of each page that keeps
        #: its own (:meth:`page_activity`); the page shown now.
        self._window_activity = activity.text()
        self._page_activities: dict[QWidget, str] = {}
        self._page_shown: QWidget | None = None

    @classmethod
    def of_window(
        cls,
        location: RegistryLocation,
        config_dir: Path,
        memory: WindowMemory,
        banner: MessageBanner,
        activity: QLabel,
    ) -> WindowServices:
        """The services of a window on the registry at ``location`` that keeps its drafts (the edited
        tool suffix) in ``config_dir``; its registry snapshot is empty until the start-up has read it."""
        return cls(
            location,
            Registry(location.directory),
            memory,
            banner,
            activity,
            drafts=Drafts(SuffixStore(config_dir)),
        )

    def show_message(
        self, message: UserMessage, action: tuple[str, Callable[[], None]] | None = None
    ) -> None:
        """Show ``message`` in the banner; ``action``: its one button (text, what it does), e.g. Undo."""
        self.banner.show_message(message, action)

    def show_error(self, error: BaseException, topic: Topic = "general") -> None:
        self.show_message(user_message(error, topic))

    def show_warning(self, problem: BaseException) -> None:
        """``problem`` in the banner as a warning: the window goes on without what it concerns."""
        self.show_message(replace(user_message(problem), level="warning"))

    def dismiss(self, *topics: str) -> None:
        """Hide the banner if it shows a message about one of ``topics``."""
        self.banner.dismiss(*topics)

    def set_activity(self, text: str) -> None:
        """The status bar's left-hand text: what the window is doing, or did last."""
        self._window_activity = text
        self.activity.setText(text)

    def page_activity(self, page: QWidget) -> Callable[[str], None]:
        """How ``page`` says what it is doing or did last: shown while the page is, and again when the user
        comes back to it; never on another page (a report finishing in the background)."""

        def say(text: str) -> None:
            self._page_activities[page] = text
            if self._page_shown is page:
                self.activity.setText(text)

        return say

    def show_page(self, page: QWidget | None) -> None:
        """``page`` is shown: the status bar says what it said last, else the window's last account."""
        self._page_shown = page
        said = self._page_activities.get(page) if page is not None else None
        self.activity.setText(said if said is not None else self._window_activity)

    async def session(self) -> Session:
        """The window's session (open tables, vectors in memory, loaded models, worker threads), created
        once the heavy libraries are loaded."""
        await self.heavy.ready()
        if self._session is None:
            self._session = core.session.Session()
        return self._session

    def model_of(self, entry: DatabaseEntry) -> ModelInfo | None:
        """What embeds ``entry``'s queries in this window (``None`` until its model is loaded)."""
        return self._session.models.model_info(entry.embedder) if self._session is not None else None

    def forget_model(self, name: str) -> None:
        """Let the next search load model ``name`` afresh (another copy of it was just brought here)."""
        if self._session is not None:
            self._session.models.forget(name)
        self.stand_ins_told.discard(name)

    async def harness(self) -> Harness:
        """The one harness (search pipeline) of this window, on the window's session; it resolves names
        in :attr:`registry`, the window's snapshot (never reading the registry itself)."""
        session = await self.session()
        if self._harness is None:
            self._harness = core.search.Harness(
                self.location.directory, session=session, registry=lambda: self.registry
            )
        return self._harness

    async def aclose(self) -> None:
        if self._harness is not None:
            await self._harness.aclose()
        self.reviews.close()
        if self._session is not None:
            await self._session.aclose()
        self.chores.shutdown(wait=False, cancel_futures=True)


async def _nothing_to_reload() -> None:
    """Until a window sets :attr:`WindowServices.reload_registry` (a page tested on its own)."""
