"""The reviews open in this window (:mod:`recall_gui.core.review`): one per database and review file,
shared by the Review page, which marks, and the pages that show verdicts beside results (the knowledge
page, the Agent view, the agent log).

A review is opened once, when a page first needs it; a page that only shows verdicts opens one only when
its review file exists, so a database nobody reviews costs nothing. Marks, undos and the other blocking
calls on a review run on one thread of the book's own, one after another, so they land in the order they
were given and never on the GUI thread. ``changed`` tells every page when a database's verdicts moved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, Signal

from recall_gui import core

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import Review, ReviewRecord
    from recall_gui.core.session import Session

T = TypeVar("T")


def _key(entry: DatabaseEntry, path: Path) -> tuple[str, str, str, str]:
    return (entry.name, entry.uri, entry.table_name, str(path))


class ReviewBook(QObject):
    """Reviews by database, the review file chosen for each, and the thread their blocking calls run on."""

    #: The verdicts on a database (its name) changed: marked, undone, another file chosen.
    changed = Signal(str)

    def __init__(self, session: Callable[[], Awaitable[Session]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        #: The review file chosen per database (the app's data folder's is used for the others).
        self._files: dict[str, Path] = {}
        self._open: dict[str, tuple[tuple[str, str, str, str], Review]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-review")

    # --- review files ------------------------------------------------------------------------------------

    def file_of(self, db_name: str) -> Path:
        """The review file of ``db_name``: the one chosen, else the app's data folder's."""
        chosen = self._files.get(db_name)
        return chosen if chosen is not None else core.review.default_review_path(db_name)

    def chosen_files(self) -> dict[str, str]:
        """The files chosen, by database (what the window remembers)."""
        return {name: str(path) for name, path in self._files.items()}

    def restore_files(self, files: dict[str, str]) -> None:
        self._files = {name: Path(path) for name, path in files.items()}

    def choose_file(self, db_name: str, path: Path | None) -> None:
        """Keep ``db_name``'s verdicts in ``path`` from now on (``None``: the app's data folder's)."""
        if path is None:
            self._files.pop(db_name, None)
        else:
            self._files[db_name] = path
        self._open.pop(db_name, None)
        self.changed.emit(db_name)

    # --- reviews -----------------------------------------------------------------------------------------

    def opened(self, db_name: str) -> Review | None:
        """The review of ``db_name`` open now, if any (no waiting)."""
        held = self._open.get(db_name)
        return held[1] if held is not None else None

    async def review(self, entry: DatabaseEntry) -> Review:
        """``entry``'s review in its file, opened once (at the table's latest version); opened before, it
        takes what other programs added to the file meanwhile."""
        path = self.file_of(entry.name)
        key = _key(entry, path)
        lock = self._locks.setdefault(entry.name, asyncio.Lock())
        async with lock:
            held = self._open.get(entry.name)
            if held is not None and held[0] == key:
                review = held[1]
                if await self.call(review.follow_file):
                    self.changed.emit(entry.name)
                return review
            session = await self._session()
            review = await core.review.open_review(session, entry, path=path)
            self._open[entry.name] = (key, review)
            return review

    async def review_if_kept(self, entry: DatabaseEntry) -> Review | None:
        """``entry``'s review when it has verdicts to show: one open already, or its file exists."""
        held = self._open.get(entry.name)
        if held is None and not await self.call(self.file_of(entry.name).exists):
            return None
        return await self.review(entry)

    async def reopen(self, entry: DatabaseEntry) -> Review:
        """``entry``'s review made afresh (the table may have a new version)."""
        self._open.pop(entry.name, None)
        return await self.review(entry)

    async def call(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the book's thread (after the calls given before it)."""
        return await self._on_thread(work, *args)

    def _on_thread(self, work: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        return asyncio.get_running_loop().run_in_executor(self._thread, work, *args)

    async def mark(self, review: Review, position: int, verdict: str, note: str) -> ReviewRecord:
        """Write a verdict on the row at ``position`` (one line appended to the review file); a verdict
        given is written even when the window closes before it lands."""
        record = await asyncio.shield(self._on_thread(review.mark, position, verdict, note))
        self.changed.emit(review.place.db_name)
        return record

    async def undo(self, review: Review) -> ReviewRecord | None:
        """Take back the newest verdict marked in this window that still stands (an undo line)."""
        record = await asyncio.shield(self._on_thread(review.undo))
        if record is not None:
            self.changed.emit(review.place.db_name)
        return record

    def close(self) -> None:
        """No more calls; those given still run (a verdict given is written before the process ends)."""
        self._thread.shutdown(wait=False)
