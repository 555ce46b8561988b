"""The window's one way to run work in the background: every operation starts in a :class:`Lane`.

asyncio keeps only weak references to tasks, so a task nobody holds can vanish mid-flight, and a task's
exception is lost unless someone asks for it. :class:`Operations` (one per window,
``services.operations``) holds every task until it ends and hands a failure to the window's one
error-to-message function. A :class:`Lane` is one kind of request, in the manner of Anki's ``QueryOp``:

- its key names it, and a window has one lane per key; the part that owns it hands it (or a method that
  starts in it) to whoever else starts its requests;
- :meth:`Lane.start` runs a coroutine in the background; in a lane with a key it first cancels the request
  running there (cancel by key: a newer search replaces an older one), and :meth:`Lane.cancel` stops it;
- :meth:`Lane.run` is how a page runs a request, in one call: it starts ``op`` in the lane (cancel by
  key), shows busy while it runs, hands its progress and its result to the screen only while no newer
  request started (an older one that was not cancelled, or finished before its cancel landed, stays off
  the screen), and hands a failure to the window's error function, then to ``failure``
  (:meth:`Lane.run_within` does the same as the last step of a request already running);
- a lane without a key runs its requests side by side (pages of rows loading at once, a model loading);
- a lane made ``awaited`` holds tasks another coroutine awaits: their outcome, failure included, is that
  coroutine's, and :meth:`Operations.cancel_all` and :meth:`Operations.wait_idle` leave them to it.

Operations touch no widget on their own behalf: what they bring back is shown by ``success`` or by the
coroutine itself, on the GUI thread; a blocking call inside one runs as ``await loop.run_in_executor(...)``.
Nothing else in the window creates a task (``tests/qt/test_operations.py`` checks it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar, overload

from recall_gui.core.base import RecallError
from recall_gui.core.messages import Topic

T = TypeVar("T")
P = ParamSpec("P")

#: The window's one error-to-message function: shows ``error`` in the banner, about ``topic``.
ShowError = Callable[[BaseException, Topic], None]
#: Shows what is running (a short sentence), or that nothing is (``None``).
ShowBusy = Callable[[str | None], None]


def _nothing(_error: RecallError) -> None:
    """No more to show on a failure than the error itself."""


def _nothing_more() -> None:
    """No more to show on a cancel than busy cleared."""


class Operations:
    """Every background operation of one window: kept until it ends, its failure shown."""

    def __init__(self, show_error: ShowError) -> None:
        self._show_error = show_error
        #: The tasks running, with the lane each was started in.
        self._tasks: dict[asyncio.Task[Any], Lane] = {}
        self._lanes: dict[str, Lane] = {}

    def lane(
        self,
        key: str | None = None,
        *,
        topic: Topic = "general",
        show_busy: ShowBusy | None = None,
        awaited: bool = False,
    ) -> Lane:
        """A new lane; ``key``: its name (one lane per key), ``None`` for requests that run side by side.
        ``topic``: what its failures are about (the banner drops them with that topic); ``show_busy``:
        where :meth:`Lane.run` shows what runs; ``awaited``: its tasks are awaited by their starter."""
        if key is not None and key in self._lanes:
            raise ValueError(f"the window has a lane {key!r} already: its owner hands it over")
        made = Lane(self, key, topic=topic, show_busy=show_busy, awaited=awaited)
        if key is not None:
            self._lanes[key] = made
        return made

    def running(self, key: str) -> bool:
        """Whether the lane ``key`` has a request running."""
        lane = self._lanes.get(key)
        return lane is not None and lane.running

    def cancel_all(self) -> None:
        """Cancel every operation (the window is closing); awaited tasks end with what awaits them."""
        for task, lane in list(self._tasks.items()):
            if not lane.awaited:
                task.cancel()
        for lane in self._lanes.values():
            lane.forget()

    @property
    def pending(self) -> int:
        """Operations not yet finished (awaited tasks are their awaiter's)."""
        return len(self._started())

    async def wait_idle(self) -> None:
        """Return when every operation (including ones started meanwhile) has finished."""
        while started := self._started():
            await asyncio.gather(*started, return_exceptions=True)

    def _started(self) -> list[asyncio.Task[Any]]:
        return [task for task, lane in self._tasks.items() if not lane.awaited]

    def _spawn(self, work: Coroutine[Any, Any, T], lane: Lane) -> asyncio.Task[T]:
        task = asyncio.get_event_loop().create_task(work)
        self._tasks[task] = lane
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        lane = self._tasks.pop(task)
        lane.ended(task)
        if task.cancelled():
            return
        error = task.exception()  # asked for in every case: an awaited task's failure is its awaiter's
        if error is not None and not lane.awaited:
            with contextlib.suppress(RuntimeError):  # the window may already be gone at shutdown
                self._show_error(error, lane.topic)


class Lane:
    """One kind of request of the window; see the module's description."""

    def __init__(
        self,
        operations: Operations,
        key: str | None,
        *,
        topic: Topic,
        show_busy: ShowBusy | None,
        awaited: bool,
    ) -> None:
        self.key = key
        self.topic: Topic = topic
        self.awaited = awaited
        self._operations = operations
        self._show_busy = show_busy
        #: The request running under the key (a lane with a key runs one at a time).
        self._task: asyncio.Task[Any] | None = None
        self._generation = 0
        self._busy = False

    # --- cancel by key ----------------------------------------------------------------------------------

    def start(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` in the background, after cancelling the request running in this lane (if it has
        a key). Its failure goes to the window's error function (an awaited lane's: to its awaiter)."""
        if self.key is not None:
            self.cancel()
        task = self._operations._spawn(work, self)
        if self.key is not None:
            self._task = task
        return task

    def cancel(self) -> bool:
        """Cancel the request running in this lane; ``True`` if there was one."""
        task, self._task = self._task, None
        if task is None or task.done():
            return False
        task.cancel()
        return True

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def forget(self) -> None:
        """No request runs here any more (all were cancelled)."""
        self._task = None

    def ended(self, task: asyncio.Task[Any]) -> None:
        if self._task is task:
            self._task = None

    # --- the newest wins --------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether the lane shows a request running."""
        return self._busy

    def supersede(self) -> int:
        """A new request begins: what every earlier one brings back will be dropped. Returns its number.
        Other operations that replace what the lane shows (browsing instead of searching, choosing
        another database) call it too."""
        self._generation += 1
        return self._generation

    def is_newest(self, generation: int) -> bool:
        return generation == self._generation

    def set_busy(self, text: str | None) -> None:
        """Show ``text`` as running (``None``: nothing runs)."""
        self._busy = text is not None
        if self._show_busy is not None:
            self._show_busy(text)

    @overload
    def run(
        self,
        op: Callable[[], Awaitable[T]],
        *,
        busy: str,
        success: Callable[[T], None],
        failure: Callable[[RecallError], None] = ...,
        cancelled: Callable[[], None] = ...,
    ) -> asyncio.Task[bool]: ...

    @overload
    def run(
        self,
        op: Callable[[Callable[P, None]], Awaitable[T]],
        *,
        busy: str,
        success: Callable[[T], None],
        progress: Callable[P, None],
        failure: Callable[[RecallError], None] = ...,
        cancelled: Callable[[], None] = ...,
    ) -> asyncio.Task[bool]: ...

    def run(
        self,
        op: Callable[..., Awaitable[T]],
        *,
        busy: str,
        success: Callable[[T], None],
        progress: Callable[..., None] | None = None,
        failure: Callable[[RecallError], None] = _nothing,
        cancelled: Callable[[], None] = _nothing_more,
    ) -> asyncio.Task[bool]:
        """One request, in one call: supersede every earlier request of the lane, show ``busy``, start
        ``op()`` in the lane (cancelling the one running under its key) and hand its result to
        ``success``. With ``progress``, ``op`` is called with a copy of it that shows nothing once a newer
        request started. A :class:`RecallError` goes to the window's error function, then to
        ``failure``; a cancel to ``cancelled``; none of them is called when a newer request started
        meanwhile. The task's result is ``True`` if ``success`` was called; an unexpected failure fails
        the task, and the error function shows it as any task's."""
        generation = self.supersede()
        self.set_busy(busy)
        if progress is not None:
            op = functools.partial(op, self._newest_only(generation, progress))
        task = self.start(self._outcome(generation, op, success, failure))
        task.add_done_callback(functools.partial(self._cancelled, generation, cancelled))
        return task

    async def run_within(
        self,
        op: Callable[[], Awaitable[T]],
        *,
        busy: str,
        success: Callable[[T], None],
        failure: Callable[[RecallError], None] = _nothing,
    ) -> bool:
        """:meth:`run` as the last step of a request already running (a search after a version opened or
        a database was chosen): awaited in that request's task, so cancelling it cancels this step."""
        generation = self.supersede()
        self.set_busy(busy)
        return await self._outcome(generation, op, success, failure)

    def _newest_only(self, generation: int, show: Callable[P, None]) -> Callable[P, None]:
        def shown(*args: P.args, **kwargs: P.kwargs) -> None:
            if self.is_newest(generation):
                show(*args, **kwargs)

        return shown

    async def _outcome(
        self,
        generation: int,
        op: Callable[[], Awaitable[T]],
        success: Callable[[T], None],
        failure: Callable[[RecallError], None],
    ) -> bool:
        try:
            result = await op()
        except RecallError as error:
            if self.is_newest(generation):
                self.set_busy(None)
                self._operations._show_error(error, self.topic)
                failure(error)
            return False
        finally:  # cancelled, or failed otherwise: the newest request stops showing busy all the same
            if self.is_newest(generation) and self._busy:
                self.set_busy(None)
        if not self.is_newest(generation):
            return False
        success(result)
        return True

    def _cancelled(self, generation: int, cancelled: Callable[[], None], task: asyncio.Task[bool]) -> None:
        """A request cancelled, even before it began: busy cleared, and ``cancelled`` told if newest."""
        if not task.cancelled() or not self.is_newest(generation):
            return
        if self._busy:
            self.set_busy(None)
        cancelled()
