"""A blocking call awaited from an event loop on a thread of its own, not the loop's default executor.

Under qasync the default executor is made of QThreads, and a QThread still running when the window's loop
ends aborts the process; Ray's start, jobs and stop can each take seconds (a stop up to its bound).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def on_own_thread(name: str, call: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """``call(*args)`` on a new thread named ``name``, as a future of the running loop. Not a daemon: a
    process that ends while LanceDB or Ray runs on a daemon thread may abort."""
    done: Future[T] = Future()

    def run() -> None:
        if not done.set_running_or_notify_cancel():
            return
        try:
            result = call(*args)
        except BaseException as error:  # handed to the awaiting task, as an executor does
            done.set_exception(error)
        else:
            done.set_result(result)

    awaited = asyncio.wrap_future(done)
    threading.Thread(target=run, name=name, daemon=False).start()
    return awaited
