"""Requests of one kind where the newest wins: run one in the background, show busy while it runs, show
its failure through the window's one error-to-message function, and drop what an older one brings back.

In the spirit of Anki's ``QueryOp``: the operation itself touches no widget; what it returns is handed to
``success`` only if no newer request started meanwhile. A blocking call runs as
``lambda: loop.run_in_executor(pool, call)``. Cancelling is the task keeper's job (``TaskKeeper`` by key);
this keeps an older request that was not cancelled, or finished before its cancel landed, off the screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from recall_gui.core.base import RecallError

T = TypeVar("T")

#: Shows what is running (a short sentence), or that nothing is (``None``).
ShowBusy = Callable[[str | None], None]


def _nothing(_error: RecallError) -> None:
    """No more to show on a failure than the error itself."""


class NewestWins:
    """One lane of requests (a page's searches, say): each :meth:`run` supersedes the ones before it.

    Other operations that replace what the lane shows (browsing instead of searching, choosing another
    database) call :meth:`supersede` too, so a search still running can no longer show its results.
    """

    def __init__(self, show_busy: ShowBusy, show_error: Callable[[RecallError], None]) -> None:
        self._show_busy = show_busy
        self._show_error = show_error
        self._generation = 0
        self._busy = False

    @property
    def busy(self) -> bool:
        """Whether the lane shows a request running."""
        return self._busy

    def supersede(self) -> int:
        """Start a new request: what every earlier one brings back will be dropped. Returns its number."""
        self._generation += 1
        return self._generation

    def is_newest(self, generation: int) -> bool:
        return generation == self._generation

    def set_busy(self, text: str | None) -> None:
        """Show ``text`` as running (``None``: nothing runs)."""
        self._busy = text is not None
        self._show_busy(text)

    async def run(
        self,
        op: Callable[[], Awaitable[T]],
        *,
        busy: str,
        success: Callable[[T], None],
        failure: Callable[[RecallError], None] = _nothing,
    ) -> bool:
        """Supersede every earlier request, show ``busy``, await ``op()`` and hand its result to
        ``success``; on a :class:`RecallError` show it, then call ``failure``. Neither is called when a
        newer request started meanwhile. ``True`` if ``success`` was called."""
        generation = self.supersede()
        self.set_busy(busy)
        try:
            result = await op()
        except RecallError as error:
            if self.is_newest(generation):
                self.set_busy(None)
                self._show_error(error)
                failure(error)
            return False
        finally:  # cancelled, or failed otherwise: the newest request stops showing busy all the same
            if self.is_newest(generation) and self._busy:
                self.set_busy(None)
        if not self.is_newest(generation):
            return False
        success(result)
        return True
