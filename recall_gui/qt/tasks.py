"""Background operations of the window: kept alive until done, superseded by key, failures reported.

asyncio keeps only weak references to tasks, so a task nobody holds can vanish mid-flight; and a task's
exception is lost unless someone asks for it. Every operation of the window starts here instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

ErrorHandler = Callable[[BaseException], None]


class TaskKeeper:
    """Starts coroutines as tasks, holds them until they finish, and hands their failures to ``on_error``.

    Starting a task under a ``key`` cancels the one already running under that key, so a newer search
    supersedes an older one.
    """

    def __init__(self, on_error: ErrorHandler) -> None:
        self._on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()
        self._by_key: dict[str, asyncio.Task[Any]] = {}

    def start(self, coro: Coroutine[Any, Any, Any], *, key: str | None = None) -> asyncio.Task[Any]:
        if key is not None:
            self.cancel(key)
        task = asyncio.get_event_loop().create_task(coro)
        self._tasks.add(task)
        if key is not None:
            self._by_key[key] = task
        task.add_done_callback(self._finished)
        return task

    def cancel(self, key: str) -> bool:
        """Cancel the task running under ``key``; ``True`` if there was one."""
        task = self._by_key.pop(key, None)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def running(self, key: str) -> bool:
        task = self._by_key.get(key)
        return task is not None and not task.done()

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._by_key.clear()

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def wait_idle(self) -> None:
        """Return when every task (including ones started meanwhile) has finished."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        for key, held in list(self._by_key.items()):
            if held is task:
                del self._by_key[key]
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            with contextlib.suppress(RuntimeError):  # the window may already be gone at shutdown
                self._on_error(error)
